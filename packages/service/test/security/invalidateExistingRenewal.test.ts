// A login with `invalidateExisting` deleted every other login key of its user. Stamped by a copy of
// a session key (a thief's renewal), that took the owner's key of the same sign-in with it: the
// owner signed in again (a sign-in of their own) and signed out, which ended only that new sign-in,
// and the thief's renewals lived on, renewable for ever. A session key renewing itself with
// `invalidateExisting` now ends the user's other sign-ins and the key it renews, and keeps the other
// keys of its own sign-in, which the owner's logout ends together. A fresh login (passkey, one-time
// code) with it still ends every login key of the user; a confined session cannot ask it at all.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { MAX_LIVE_SESSIONS_PER_USER } from '../../src/domain/sessions.ts'
import { apiKeyInOrganization } from '../../src/kernel/store/model.ts'
import {
  createHarness,
  type Harness,
  type Json,
  resultOf,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'
import { twoInstances, usePostgres } from '../support/twoInstances.ts'
import { signedIn } from './inFlight.ts'
import { acts, deleteKeys, keyIdOf, renew, revoked, subscribed, WEBHOOKS } from './signIns.ts'
import { twoDevices } from './twoDevices.ts'

/** An auth-proxy call, as a browser on the app's page makes it. */
async function proxy(h: Harness, path: string, body: unknown): Promise<{ status: number; body: Json }> {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: 'http://app.test',
    },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: await res.json() }
}

/** An e-mail code's verification token (bound to no key), through the auth proxy. */
async function emailToken(h: Harness, email: string): Promise<string> {
  // A minute apart: a contact gets 3 codes a minute.
  h.clock.advance(61_000)
  const init = await proxy(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
  expect(init.status).toBe(200)
  const res = await h.service.app.request(`/dev/outbox.json?contact=${encodeURIComponent(email)}`)
  const messages = ((await res.json()) as { messages: { code: string; otpId: string }[] }).messages
  const { code } = messages.find((message) => message.otpId === init.body.otpId)!
  const verify = await proxy(h, 'otp_verify', { otpId: init.body.otpId, otpCode: code })
  expect(verify.status, JSON.stringify(verify.body)).toBe(200)
  h.clock.advance(1000)
  return verify.body.verificationToken as string
}

describe('a renewal with invalidateExisting keeps its own sign-in', () => {
  it("a thief's renewal with invalidateExisting leaves the owner's key of the sign-in, whose logout then ends the thief", async () => {
    const h = await createHarness(WEBHOOKS as never)
    await subscribed(h)
    const { organizationId, userId, durable, session: first } = await signedIn(h)
    // The thief renews its copy of the session key once; the owner's kit refreshes (the new key
    // gives the old one back). The owner is also signed in on a laptop (another sign-in).
    const copy = (await renew(h, first, organizationId)).key!
    const owner = (await renew(h, first, organizationId)).key!
    expect((await deleteKeys(h, owner, organizationId, userId, [first])).status).toBe(200)
    const laptop = (await renew(h, durable, organizationId)).key!
    const copyId = await keyIdOf(h, userId, copy)
    const ownerId = await keyIdOf(h, userId, owner)
    const laptopId = await keyIdOf(h, userId, laptop)

    // The thief renews its copy with invalidateExisting.
    const thief = (await renew(h, copy, organizationId, true)).key!
    const thiefId = await keyIdOf(h, userId, thief)
    // The owner's key is of the thief's sign-in: it stays. The key renewed and the laptop's end.
    expect(await acts(h, owner, organizationId)).toBe(200)
    expect(await acts(h, thief, organizationId)).toBe(200)
    expect(await acts(h, copy, organizationId)).toBe(401)
    expect(await acts(h, laptop, organizationId)).toBe(401)
    const reasons = await revoked(h)
    expect([copyId, laptopId, ownerId].map((id) => reasons.get(id) ?? [])).toEqual([
      ['invalidate_existing'],
      ['invalidate_existing'],
      [],
    ])

    // The owner signs out: the thief's renewal ends with the owner's key, and renews nothing.
    expect((await deleteKeys(h, owner, organizationId, userId, [owner])).status).toBe(200)
    expect(await acts(h, thief, organizationId)).toBe(401)
    expect((await renew(h, thief, organizationId)).status).toBe(401)
    expect((await renew(h, thief, organizationId, true)).status).toBe(401)
    expect((await revoked(h)).get(thiefId)).toEqual(['logout'])
    // No session of the user is left; the durable key that opened them stays, and signs.
    const left = await h.service.store.findBy('apiKeys', 'userId', userId)
    expect(left.map((k) => k.publicKey)).toEqual([durable.publicKey])
    expect(await acts(h, durable, organizationId)).toBe(200)
  })

  it("the published refresh with invalidateExisting: the caller's old key ends, the new one works, another tab's key of the sign-in stays", async () => {
    const h = await createHarness(WEBHOOKS as never)
    await subscribed(h)
    const { organizationId, userId, durable, session } = await signedIn(h)
    const tab2 = (await renew(h, session, organizationId)).key!
    const other = (await renew(h, durable, organizationId)).key!
    const sessionId = await keyIdOf(h, userId, session)
    const otherId = await keyIdOf(h, userId, other)

    const refreshed = (await renew(h, session, organizationId, true)).key!
    expect(await acts(h, refreshed, organizationId)).toBe(200)
    expect(await acts(h, session, organizationId)).toBe(401)
    expect((await renew(h, session, organizationId)).status).toBe(401)
    expect(await acts(h, tab2, organizationId)).toBe(200)
    expect(await acts(h, other, organizationId)).toBe(401)
    const reasons = await revoked(h)
    expect([reasons.get(sessionId), reasons.get(otherId)]).toEqual([
      ['invalidate_existing'],
      ['invalidate_existing'],
    ])
    // The refreshed key renews again; and is of the sign-in its logout ends (tab2 with it).
    const again = (await renew(h, refreshed, organizationId, true)).key!
    expect(await acts(h, refreshed, organizationId)).toBe(401)
    expect((await deleteKeys(h, again, organizationId, userId, [again])).status).toBe(200)
    expect(await acts(h, tab2, organizationId)).toBe(401)
    expect(await acts(h, durable, organizationId)).toBe(200)
  })

  it("a passkey sign-in with invalidateExisting ends every login key, the thief's renewals with it", async () => {
    const h = await createHarness()
    const { phone, laptop, organizationId } = await twoDevices(h)
    const session = (await renew(h, phone, organizationId)).key!
    const thief = (await renew(h, session, organizationId, true)).key!
    const tab = (await renew(h, thief, organizationId)).key!
    expect(await acts(h, thief, organizationId)).toBe(200)

    const fresh = (await renew(h, laptop, organizationId, true)).key!
    expect(await acts(h, fresh, organizationId)).toBe(200)
    for (const key of [session, thief, tab]) expect(await acts(h, key, organizationId)).toBe(401)
    expect((await renew(h, thief, organizationId)).status).toBe(401)
    // The passkeys themselves are not sessions.
    expect(await acts(h, phone, organizationId)).toBe(200)
  })

  it("an e-mail code login with invalidateExisting ends every login key, the thief's renewals with it", async () => {
    const h = await createHarness()
    const email = 'pat@example.com'
    const signup = await proxy(h, 'signup', {
      userEmail: email,
      verificationToken: await emailToken(h, email),
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
    })
    expect(signup.status).toBe(200)
    const organizationId = signup.body.organizationId as string
    const otpLogin = async (invalidateExisting: boolean) => {
      const key = testKey()
      const login = await proxy(h, 'otp_login', {
        verificationToken: await emailToken(h, email),
        publicKey: key.publicKey,
        expirationSeconds: '3600',
        invalidateExisting,
      })
      expect(login.status).toBe(200)
      return key
    }
    const session = await otpLogin(false)
    const owner = (await renew(h, session, organizationId)).key!
    const thief = (await renew(h, session, organizationId, true)).key!
    const elsewhere = await otpLogin(false)
    for (const key of [thief, owner, elsewhere]) expect(await acts(h, key, organizationId)).toBe(200)

    const fresh = await otpLogin(true)
    expect(await acts(h, fresh, organizationId)).toBe(200)
    for (const key of [session, thief, owner, elsewhere]) expect(await acts(h, key, organizationId)).toBe(401)
    expect((await renew(h, thief, organizationId)).status).toBe(401)
  })

  it("a confined session cannot ask invalidateExisting (403 SESSION_SCOPE_DENIED): its user's sessions stay", async () => {
    const h = await createHarness()
    const { organizationId, userId, durable, session: owner } = await signedIn(h)
    const laptop = (await renew(h, durable, organizationId)).key!
    h.clock.advance(1)
    // The widest scope: a profile never lets its sessions log in, whatever it says.
    const sessionProfileId = resultOf(
      'create_session_profile',
      await h.submit(
        'create_session_profile',
        { sessionProfileName: 'anything', scope: 'true' },
        { as: durable, organizationId },
      ),
    ).sessionProfileId as string
    const agent = testKey()
    h.clock.advance(1)
    resultOf(
      'stamp_login',
      await h.submit(
        'stamp_login',
        { publicKey: agent.publicKey, expirationSeconds: '3600', sessionProfileId },
        { as: owner, organizationId },
      ),
    )
    expect(await acts(h, agent, organizationId)).toBe(200)
    const before = (await h.service.store.findBy('apiKeys', 'userId', userId)).map((k) => k.id).sort()

    // As the published refreshSession sends it for a profiled session (its profile named), and without.
    for (const parameters of [{ sessionProfileId }, {}]) {
      const fresh = testKey()
      h.clock.advance(1)
      const reply = await h.submit(
        'stamp_login',
        { publicKey: fresh.publicKey, expirationSeconds: '3600', invalidateExisting: true, ...parameters },
        { as: agent, organizationId },
      )
      expect([reply.status, reply.body.details?.errorCode ?? reply.body.code]).toEqual([
        403,
        'SESSION_SCOPE_DENIED',
      ])
    }
    expect((await h.service.store.findBy('apiKeys', 'userId', userId)).map((k) => k.id).sort()).toEqual(
      before,
    )
    for (const key of [owner, laptop, agent]) expect(await acts(h, key, organizationId)).toBe(200)
  })

  it("a thief's copy issuing a confined session with invalidateExisting leaves the owner's key, whose logout ends both", async () => {
    const h = await createHarness()
    const { organizationId, userId, durable, session: first } = await signedIn(h)
    const copy = (await renew(h, first, organizationId)).key!
    const owner = (await renew(h, first, organizationId)).key!
    expect((await deleteKeys(h, owner, organizationId, userId, [first])).status).toBe(200)
    const laptop = (await renew(h, durable, organizationId)).key!
    // With the copy: a 30-day profile of any scope, and a session under it that signs the rest out.
    h.clock.advance(1)
    const sessionProfileId = resultOf(
      'create_session_profile',
      await h.submit(
        'create_session_profile',
        { sessionProfileName: 'mine', scope: 'true', expirationSeconds: String(30 * 24 * 3600) },
        { as: copy, organizationId },
      ),
    ).sessionProfileId as string
    const confined = testKey()
    h.clock.advance(1)
    resultOf(
      'stamp_login',
      await h.submit(
        'stamp_login',
        { publicKey: confined.publicKey, invalidateExisting: true, sessionProfileId },
        { as: copy, organizationId },
      ),
    )
    expect(await acts(h, confined, organizationId)).toBe(200)
    expect(await acts(h, laptop, organizationId)).toBe(401)
    expect(await acts(h, owner, organizationId)).toBe(200)
    expect((await deleteKeys(h, owner, organizationId, userId, [owner])).status).toBe(200)
    expect(await acts(h, confined, organizationId)).toBe(401)
  })

  it('the keys a renewal with invalidateExisting keeps count toward the live-session cap', async () => {
    const h = await createHarness(WEBHOOKS as never)
    await subscribed(h)
    const { organizationId, userId, durable, session } = await signedIn(h)
    const sessionId = await keyIdOf(h, userId, session)
    const thief = (await renew(h, session, organizationId)).key!
    // 120 more renewals of the sign-in, and 5 keys of another one (written directly: fast).
    const start = h.clock.now()
    await h.service.store.transaction(async (tx) => {
      for (let i = 0; i < 125; i++) {
        const publicKey = testKey().publicKey
        await tx.put('apiKeys', {
          id: `renewal-${String(i).padStart(3, '0')}`,
          organizationId,
          userId,
          name: `renewal ${i}`,
          publicKey,
          keyInOrganization: apiKeyInOrganization(publicKey, organizationId),
          curve: 'API_KEY_CURVE_P256',
          credentialType: 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256',
          expirationSeconds: '3600',
          origin: i < 120 ? { signIn: sessionId, renewedFrom: sessionId } : { apiKeyIds: ['elsewhere'] },
          createdAt: start + i,
          updatedAt: start + i,
        })
      }
    })
    h.clock.advance(1000)
    const renewed = (await renew(h, thief, organizationId, true)).key!
    expect(await acts(h, renewed, organizationId)).toBe(200)
    const sessions = (await h.service.store.findBy('apiKeys', 'userId', userId)).filter(
      (k) => k.expirationSeconds !== undefined,
    )
    expect(sessions).toHaveLength(MAX_LIVE_SESSIONS_PER_USER)
    // The other sign-in's 5 and the key renewed ended; of the 121 kept, the 22 oldest (the first
    // session key, then renewal-000 to -020) made room for the new one.
    const counts = new Map<string, number>()
    for (const [, reasons] of await revoked(h))
      for (const reason of reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1)
    expect(Object.fromEntries(counts)).toEqual({ invalidate_existing: 6, too_many_sessions: 22 })
    const ids = sessions.map((k) => k.id).filter((id) => id.startsWith('renewal-'))
    expect(ids.sort()[0]).toBe('renewal-021')
    expect(ids.every((id) => id < 'renewal-120')).toBe(true)
    expect(await acts(h, session, organizationId)).toBe(401)
    expect(await acts(h, durable, organizationId)).toBe(200)
  })
})

describe('on two instances (PostgreSQL)', () => {
  const postgres = usePostgres()

  it('a thief renewing with invalidateExisting on B as the owner signs out on A keeps no session (5 owners)', async () => {
    const [a, b] = await twoInstances(postgres.cluster, 'invalidate_existing_renewal')
    const race = async () => {
      const { organizationId, userId, session: first } = await signedIn(a)
      const copy = (await renew(b, first, organizationId)).key!
      const owner = (await renew(a, first, organizationId)).key!
      expect((await deleteKeys(a, owner, organizationId, userId, [first])).status).toBe(200)
      const ownerId = await keyIdOf(a, userId, owner)
      // The thief's chain on B, each renewal stamped by the last, with invalidateExisting.
      let current: TestKey = copy
      let made = 0
      let stop = false
      const chain = (async () => {
        while (!stop && made < 500) {
          const next = await renew(b, current, organizationId, true)
          if (next.status !== 200) return next.status
          made++
          current = next.key!
        }
        return (await renew(b, current, organizationId, true)).status
      })()
      const until = performance.now() + 10_000
      while (made < 3 && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 2))
      expect(made, 'the thief renews').toBeGreaterThanOrEqual(3)
      a.clock.advance(1)
      const logout = await a.submit(
        'delete_api_keys',
        { userId, apiKeyIds: [ownerId] },
        { as: owner, organizationId },
      )
      stop = true
      const end = await chain
      const live = (await a.service.store.findBy('apiKeys', 'userId', userId)).filter(
        (k) => k.expirationSeconds !== undefined,
      )
      return {
        logout: logout.status,
        end,
        current: await acts(a, current, organizationId),
        live: live.length,
      }
    }
    const outcomes = []
    for (let i = 0; i < 5; i++) outcomes.push(await race())
    expect(outcomes).toEqual(outcomes.map(() => ({ logout: 200, end: 401, current: 401, live: 0 })))
    await a.service.close()
    await b.service.close()
  }, 300_000)
})
