// A new user's credentials (addNewUserCredentials): the keys with a lifetime (a sign-up's first
// session keys) carry the passkeys registered with them as their origin, and every key row is
// written once in the activity's transaction, not written and then rewritten with its origin.
import { describe, expect, it } from 'vitest'
import type { ApiKeyRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Store.ts'
import { createHarness, type Harness, resultOf, softPasskey, testKey } from '../testing/harness.ts'

/** Runs `work` counting, per transaction run, the writes of each API key row; resolves with the last run's. */
async function apiKeyWrites(h: Harness, work: () => Promise<unknown>): Promise<Map<string, ApiKeyRow[]>> {
  const store = h.service.runtime.store
  const original = store.transaction.bind(store)
  let last = new Map<string, ApiKeyRow[]>()
  store.transaction = ((fn: (tx: Transaction) => unknown, options?: object) =>
    original((tx) => {
      const writes = new Map<string, ApiKeyRow[]>()
      const put = tx.put.bind(tx)
      tx.put = (async (table: string, row: { id: string }) => {
        if (table === 'apiKeys') {
          writes.set(row.id, [...(writes.get(row.id) ?? []), row as ApiKeyRow])
          last = writes
        }
        return put(table as never, row as never)
      }) as typeof tx.put
      return fn(tx)
    }, options)) as typeof store.transaction
  try {
    await work()
  } finally {
    store.transaction = original as typeof store.transaction
  }
  return last
}

describe("a new user's credentials", () => {
  it('writes each key once, a key with a lifetime with the passkeys registered with it as its origin', async () => {
    const h = await createHarness()
    const [lifelong, session] = [testKey(), testKey()]
    const passkey = softPasskey()
    let organizationId = ''
    const writes = await apiKeyWrites(h, async () => {
      organizationId = resultOf(
        'create_sub_organization',
        await h.submit('create_sub_organization', {
          subOrganizationName: 'signed up',
          rootUsers: [
            {
              userName: 'user',
              apiKeys: [
                lifelong.apiKey('recovery'),
                { ...session.apiKey('session'), expirationSeconds: '900' },
              ],
              authenticators: [passkey.register(undefined, 'Phone')],
              oauthProviders: [],
            },
          ],
          rootQuorumThreshold: 1,
        }),
      ).subOrganizationId
    })
    const [authenticator] = await h.service.store.findBy('authenticators', 'organizationId', organizationId)
    const keys = await h.service.store.findBy('apiKeys', 'organizationId', organizationId)
    const byKey = (key: { publicKey: string }) => keys.find((row) => row.publicKey === key.publicKey)!
    expect([byKey(lifelong).origin, byKey(session).origin]).toEqual([
      undefined,
      { authenticatorIds: [authenticator!.id] },
    ])
    expect([...writes].map(([id, rows]) => [id, rows.length])).toEqual([
      [byKey(lifelong).id, 1],
      [byKey(session).id, 1],
    ])
    // What was written is what is stored.
    expect(writes.get(byKey(session).id)).toEqual([byKey(session)])
    await h.service.close()
  })
})
