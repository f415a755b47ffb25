// A passkey that proves itself by signing in to an account only it gets into (a passkey sign-up's,
// of a passkey a record showed before: anyone who read it may have signed up with a copy) ends the
// session keys whoever signed that account up registered beside it (a registration proves nothing
// about who holds a passkey: see passkeyRegisteredBySomeoneElse.test.ts). Every other way a
// session ends is a LATCHKEY_SESSION_REVOKED; this one is too (`passkey_took_over`, naming the
// passkey: a sign-in has no activity), one per ended key, written in the transaction that ends
// them, and once however many sign-ins prove the passkey at once, on one instance or two.
import { decodeJwtClaims, type SessionClaims, type WebhookEventBody } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import type { Transaction } from '../../src/kernel/store/Store.ts'
import {
  createHarness,
  type Harness,
  resultOf,
  type SoftPasskey,
  softPasskey,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'
import { twoInstances, usePostgres } from '../support/twoInstances.ts'
import { proxySignUpWithPasskey, showPasskey } from './proxySignUp.ts'

/** Webhooks on, delivered nowhere (the events are read from the database). */
const WEBHOOKS: Partial<CreateServiceOptions> = {
  webhooks: { transport: async () => ({ status: 200, body: '' }) },
  jobs: { pollMs: 3_600_000, backoff: { baseMs: 1000, maxMs: 60_000 } },
}

/** The parent organization's endpoint, subscribed to LATCHKEY_SESSION_REVOKED (its sub-organizations' too). */
async function subscribe(h: Harness) {
  resultOf(
    'create_webhook_endpoint',
    await h.submit('create_webhook_endpoint', {
      url: 'http://127.0.0.1:9/hook',
      name: 'app',
      subscriptions: [{ eventType: 'LATCHKEY_SESSION_REVOKED' }],
    }),
  )
}

/** Every LATCHKEY_SESSION_REVOKED recorded, waiting to be fanned out or fanned out (one endpoint: one delivery each). */
async function revoked(h: Harness): Promise<{ organizationId: string; data: unknown }[]> {
  const waiting = (await h.service.store.all('webhookEvents'))
    .filter((event) => event.eventType === 'LATCHKEY_SESSION_REVOKED')
    .map((event) => ({ organizationId: event.organizationId, data: event.data }))
  const delivered = (await h.service.store.all('webhookDeliveries'))
    .filter((delivery) => delivery.eventType === 'LATCHKEY_SESSION_REVOKED')
    .map((delivery) => JSON.parse(delivery.body) as WebhookEventBody)
    .map((body) => ({ organizationId: body.organizationId, data: body.data }))
  // In the order of their keys' ids (fanned out or not yet, whichever the job worker got to).
  const key = (event: { data: unknown }) => (event.data as { apiKeyId: string }).apiKeyId
  return [...waiting, ...delivered].sort((x, y) => key(x).localeCompare(key(y)))
}

/**
 * A passkey sign-up through the auth proxy as a published client makes it (the passkey and two
 * session keys beside it), of a passkey a record showed before: whoever submits it may hold a copy.
 */
async function signUpWithPasskey(h: Harness, passkey: SoftPasskey) {
  await showPasskey(h, passkey)
  const { organizationId, sessions } = await proxySignUpWithPasskey(h, passkey, [testKey(), testKey()])
  const [user] = await h.service.store.findBy('users', 'organizationId', organizationId)
  const [authenticator] = await h.service.store.findBy('authenticators', 'organizationId', organizationId)
  const keys = await h.service.store.findBy('apiKeys', 'organizationId', organizationId)
  return {
    organizationId,
    userId: user!.id,
    authenticatorId: authenticator!.id,
    sessions,
    apiKeyIds: sessions.map((session) => keys.find((key) => key.publicKey === session.publicKey)!.id),
  }
}

/** The events the take-over of `signedUp` records: one per session key registered beside the passkey. */
const tookOver = (signedUp: Awaited<ReturnType<typeof signUpWithPasskey>>) =>
  signedUp.apiKeyIds.map((apiKeyId) => ({
    organizationId: signedUp.organizationId,
    data: {
      userId: signedUp.userId,
      apiKeyId,
      reason: 'passkey_took_over',
      authenticatorId: signedUp.authenticatorId,
    },
  }))

/** `signInWithPasskey`'s stamp_login naming the parent; resolves with where it landed and its session key. */
async function signIn(h: Harness, passkey: SoftPasskey) {
  const session = testKey()
  const reply = await h.submit(
    'stamp_login',
    { publicKey: session.publicKey },
    { as: passkey, organizationId: h.organizationId },
  )
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  const landedIn = decodeJwtClaims<SessionClaims>(resultOf('stamp_login', reply).session).organization_id
  return { landedIn, session }
}

const whoami = async (h: Harness, as: TestKey | SoftPasskey, organizationId: string) =>
  (await h.query('whoami', { organizationId }, { as, organizationId })).status

describe('the session keys a passkey sign-in ends where only the passkey gets in', () => {
  it('are each a LATCHKEY_SESSION_REVOKED (passkey_took_over) naming the passkey, and only once', async () => {
    // The metric (`latchkey_signin_sessions_revoked_total`) counts the keys ended, once each.
    const counted: number[] = []
    const h = await createHarness({
      ...WEBHOOKS,
      events: {
        emit: (name, data) => {
          if (name === 'signin.sessions_revoked') {
            const { reason, count } = data as { reason: string; count: number }
            if (reason === 'passkey_took_over') counted.push(count)
          }
        },
      },
    })
    await subscribe(h)
    // From the parent (signInWithPasskey).
    const passkey = softPasskey()
    const signedUp = await signUpWithPasskey(h, passkey)
    // Control: the sign-up's session keys work, and nothing is revoked yet.
    for (const session of signedUp.sessions)
      expect(await whoami(h, session, signedUp.organizationId)).toBe(200)
    expect(await revoked(h)).toEqual([])
    h.clock.advance(1)
    expect((await signIn(h, passkey)).landedIn).toBe(signedUp.organizationId)
    for (const session of signedUp.sessions)
      expect(await whoami(h, session, signedUp.organizationId)).toBe(401)
    expect(await revoked(h)).toEqual(tookOver(signedUp))

    // Naming the account (a lookup-then-login, or a whoami): the same.
    const other = softPasskey()
    const otherSignedUp = await signUpWithPasskey(h, other)
    h.clock.advance(1)
    expect(await whoami(h, other, otherSignedUp.organizationId)).toBe(200)
    expect(await revoked(h)).toEqual([...tookOver(signedUp), ...tookOver(otherSignedUp)])

    // Signing in again ends nothing more: the passkey proved itself already.
    h.clock.advance(1)
    await signIn(h, passkey)
    expect(await whoami(h, other, otherSignedUp.organizationId)).toBe(200)
    expect(await revoked(h)).toHaveLength(4)
    expect(counted).toEqual([signedUp.sessions.length, otherSignedUp.sessions.length])
    await h.service.close()
  })
})

const postgres = usePostgres()

/**
 * Holds the next transaction of `h` that reads the passkey `authenticatorId` (a sign-in's, which
 * ends the sign-up's sessions) at that read: `before` is awaited before the read is made (the
 * transaction then sees what committed meanwhile), `after` once it is made (the transaction has
 * read the passkey unproven). Each waits 5 s at most. The sign-in has routed and verified the
 * stamp by then.
 */
function holdPasskeyRead(
  h: Harness,
  authenticatorId: string,
  hold: { before?: () => Promise<unknown>; after?: () => Promise<unknown> },
) {
  const store = h.service.runtime.store
  const original = store.transaction.bind(store)
  let armed = true
  const bounded = (promise: Promise<unknown>) =>
    Promise.race([promise, new Promise((done) => setTimeout(done, 5000))])
  store.transaction = ((fn: (tx: Transaction) => unknown, options?: object) =>
    original((tx) => {
      const get = tx.get.bind(tx)
      tx.get = (async (table: string, id: string) => {
        if (!armed || table !== 'authenticators' || id !== authenticatorId) return get(table as never, id)
        armed = false
        if (hold.before) await bounded(hold.before())
        const row = await get(table as never, id)
        if (hold.after) await bounded(hold.after())
        return row
      }) as typeof tx.get
      return fn(tx)
    }, options)) as typeof store.transaction
  return () => {
    store.transaction = original as typeof store.transaction
  }
}

/** A barrier of two: each `arrive()` resolves once both arrived. */
function barrier() {
  let arrived = 0
  let open!: () => void
  const opened = new Promise<void>((done) => {
    open = done
  })
  return {
    arrive: () => {
      if (++arrived === 2) open()
      return opened
    },
    count: () => arrived,
  }
}

describe('a passkey proved by two sign-ins at once on two instances', () => {
  it('ends the sign-up’s session keys with one event each, and none of what the sign-ins opened', {
    timeout: 60_000,
  }, async () => {
    const [a, b] = (await twoInstances(postgres.cluster, 'passkey_take_over', WEBHOOKS)) as [Harness, Harness]
    await subscribe(a)

    // Both read the passkey unproven, then both end the sessions: one commits, the other conflicts
    // and runs again, finding the passkey proven.
    const passkey = softPasskey()
    const signedUp = await signUpWithPasskey(a, passkey)
    const both = barrier()
    const restore = [a, b].map((h) => holdPasskeyRead(h, signedUp.authenticatorId, { after: both.arrive }))
    a.clock.advance(1)
    const [onA, onB] = await Promise.all([signIn(a, passkey), signIn(b, passkey)])
    for (const done of restore) done()
    expect(both.count()).toBe(2)
    expect([onA.landedIn, onB.landedIn]).toEqual([signedUp.organizationId, signedUp.organizationId])
    expect(await revoked(b)).toEqual(tookOver(signedUp))
    for (const session of signedUp.sessions)
      expect(await whoami(b, session, signedUp.organizationId)).toBe(401)
    for (const { session } of [onA, onB]) expect(await whoami(b, session, signedUp.organizationId)).toBe(200)

    // B's sign-in read the passkey unproven before A's proved it, but its transaction starts once
    // A's sign-in (and the session it opened) committed: it ends nothing, A's session included.
    const second = softPasskey()
    const secondSignedUp = await signUpWithPasskey(a, second)
    const bHeld = barrier()
    const aSignedIn = barrier()
    const held = holdPasskeyRead(b, secondSignedUp.authenticatorId, {
      before: () => Promise.all([bHeld.arrive(), aSignedIn.arrive()]),
    })
    a.clock.advance(1)
    const onBLater = signIn(b, second)
    await bHeld.arrive()
    const onAFirst = await signIn(a, second)
    aSignedIn.arrive()
    const onBSecond = await onBLater
    held()
    expect([bHeld.count(), aSignedIn.count()]).toEqual([2, 2])
    expect([onAFirst.landedIn, onBSecond.landedIn]).toEqual([
      secondSignedUp.organizationId,
      secondSignedUp.organizationId,
    ])
    for (const { session } of [onAFirst, onBSecond])
      expect(await whoami(a, session, secondSignedUp.organizationId)).toBe(200)
    expect(await revoked(a)).toEqual([...tookOver(signedUp), ...tookOver(secondSignedUp)])
    for (const h of [a, b]) await h.service.close()
  })
})
