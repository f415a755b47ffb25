// What the tests of a request whose credential goes while it is in flight share: a signed-in user
// whose session key a thief holds, the owner's logout, and a submit with something run between its
// admission and its activity's transaction.
import { expect } from 'vitest'
import { type Harness, type Reply, resultOf, type Stamper, testKey } from '../../src/testing/harness.ts'

/** A user with a durable key and a one-hour login session key (the one a thief holds). */
export async function signedIn(h: Harness) {
  const durable = testKey()
  const { organizationId, userIds } = await h.createSubOrganization({ keys: [durable] })
  const userId = userIds[0]!
  const session = testKey()
  resultOf(
    'stamp_login',
    await h.submit(
      'stamp_login',
      { publicKey: session.publicKey, expirationSeconds: '3600' },
      { as: durable, organizationId },
    ),
  )
  const keys = await h.query('get_api_keys', { userId }, { as: durable, organizationId })
  const sessionKeyId = (keys.body.apiKeys as { apiKeyId: string; credential: { publicKey: string } }[]).find(
    (k) => k.credential.publicKey === session.publicKey,
  )!.apiKeyId
  /** The owner's sign-out: the session's own delete_api_keys, as the kit's logout sends it. */
  const logout = async () => {
    h.clock.advance(1)
    const reply = await h.submit(
      'delete_api_keys',
      { userId, apiKeyIds: [sessionKeyId] },
      { as: session, organizationId },
    )
    expect(reply.status).toBe(200)
  }
  return { durable, organizationId, userId, session, logout }
}

/** Runs `during` once, as the next activity transaction is about to start (after admission). */
function beforeNextTransaction(h: Harness, during: () => Promise<void>) {
  const timings = h.service.runtime.timings
  const original = timings.time.bind(timings)
  let armed = true
  timings.time = (async (stage: string, work: () => Promise<unknown>) => {
    if (armed && stage === 'transaction') {
      armed = false
      await during()
    }
    return original(stage as never, work)
  }) as typeof timings.time
  return () => {
    timings.time = original
  }
}

/** `submit` with `during` run between its admission and its transaction. */
export async function submitRacing(
  h: Harness,
  during: () => Promise<void>,
  ...args: Parameters<Harness['submit']>
) {
  const restore = beforeNextTransaction(h, during)
  try {
    return await h.submit(...args)
  } finally {
    restore()
  }
}

export const readOnly = (token: string): Stamper => ({ stamp: () => ['X-Session', token] })
export const refusal = (reply: Reply) => [reply.status, reply.body?.details?.errorCode ?? reply.body?.code]
export const lists = async (h: Harness, as: Stamper, organizationId: string) =>
  (await h.query('list_wallets', {}, { as, organizationId })).status
