// What the tests of sign-ins (a login session key and its renewals) share: a renewal by `stamp_login`
// as the kit's refreshSession makes it, a key's id, the logout or revocation by `delete_api_keys`, a
// signing probe, and the LATCHKEY_SESSION_REVOKED events read back from the database.
import { type Harness, resultOf, type Stamper, type TestKey, testKey } from '../../src/testing/harness.ts'

/** Webhooks on, delivered nowhere: the events are read from the database. */
export const WEBHOOKS = {
  webhooks: { transport: async () => ({ status: 200, body: '' }) },
  jobs: { pollMs: 3_600_000, backoff: { baseMs: 1000, maxMs: 60_000 } },
}

/** A login session of `expirationSeconds` (an hour unless told) that `stamp_login` opens with `opener`'s stamp. */
export async function login(
  h: Harness,
  opener: Stamper,
  organizationId: string,
  expirationSeconds = '3600',
): Promise<TestKey> {
  const session = testKey()
  h.clock.advance(1)
  resultOf(
    'stamp_login',
    await h.submit(
      'stamp_login',
      { publicKey: session.publicKey, expirationSeconds },
      { as: opener, organizationId },
    ),
  )
  return session
}

/**
 * A renewal of `as`'s session, as the kit's refreshSession makes it: a `stamp_login` for a fresh key,
 * with `invalidateExisting` when `invalidate` (the body the published
 * `refreshSession({ invalidateExisitng })` sends; it deletes no key itself).
 */
export async function renew(h: Harness, as: Stamper, organizationId: string, invalidate = false) {
  const key = testKey()
  h.clock.advance(1)
  const reply = await h.submit(
    'stamp_login',
    {
      publicKey: key.publicKey,
      expirationSeconds: '3600',
      ...(invalidate ? { invalidateExisting: true } : {}),
    },
    { as, organizationId },
  )
  return reply.status === 200 ? { status: 200, key } : { status: reply.status, key: undefined, reply }
}

/** The id of the user's API key with `key`'s public key. */
export async function keyIdOf(h: Harness, userId: string, key: Stamper): Promise<string> {
  const row = (await h.service.store.findBy('apiKeys', 'userId', userId)).find(
    (k) => k.publicKey === (key as unknown as { publicKey: string }).publicKey,
  )
  if (!row) throw new Error('no such key')
  return row.id
}

/** `delete_api_keys` of `keys`, stamped by `as`. */
export async function deleteKeys(
  h: Harness,
  as: Stamper,
  organizationId: string,
  userId: string,
  keys: Stamper[],
) {
  const apiKeyIds = await Promise.all(keys.map((key) => keyIdOf(h, userId, key)))
  h.clock.advance(1)
  return h.submit('delete_api_keys', { userId, apiKeyIds }, { as, organizationId })
}

/** The status of a `create_wallet` stamped by `as`. */
export async function acts(h: Harness, as: Stamper, organizationId: string): Promise<number> {
  h.clock.advance(1)
  return (
    await h.submit('create_wallet', { walletName: `w${h.clock.now()}`, accounts: [] }, { as, organizationId })
  ).status
}

/** The `reason` of each LATCHKEY_SESSION_REVOKED recorded, by the key it names. */
export async function revoked(h: Harness): Promise<Map<string, string[]>> {
  const reasons = new Map<string, string[]>()
  for (const event of await h.service.store.all('webhookEvents')) {
    if (event.eventType !== 'LATCHKEY_SESSION_REVOKED') continue
    const { apiKeyId, reason } = event.data as { apiKeyId: string; reason: string }
    reasons.set(apiKeyId, [...(reasons.get(apiKeyId) ?? []), reason])
  }
  return reasons
}

/** The `reason` of each LATCHKEY_SESSION_REVOKED recorded for `apiKeyId`. */
export async function revokedReasons(h: Harness, apiKeyId: string): Promise<string[]> {
  return (await revoked(h)).get(apiKeyId) ?? []
}

/** The app's endpoint for LATCHKEY_SESSION_REVOKED: its sub-organizations' events are recorded for it. */
export async function subscribed(h: Harness) {
  resultOf(
    'create_webhook_endpoint',
    await h.submit('create_webhook_endpoint', {
      url: 'http://127.0.0.1:9/hook',
      name: 'app',
      subscriptions: [{ eventType: 'LATCHKEY_SESSION_REVOKED' }],
    }),
  )
}
