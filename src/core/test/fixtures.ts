/**
 * Client test fixtures: a REAL in-process local service (createService through the harness) used
 * as the client's `fetch`, on the real clock (so vi.useFakeTimers moves both sides together).
 */

import { createHarness, type Harness, testKey } from '@latchkey/service/testing'
import { IDBFactory } from 'fake-indexeddb'
import { createLatchkey, type Latchkey, type LatchkeyConfig } from '../createLatchkey.ts'
import type { LatchkeyStorage } from '../session/persistence.ts'
import { addSessionFromKey } from '../session/sessions.ts'
import type { Session } from '../session/types.ts'

export const SERVICE_URL = 'http://localhost:8787'

/** A Web Storage stand-in whose contents tests can inspect. */
export function memoryStorage(): LatchkeyStorage & { data: Map<string, string> } {
  const data = new Map<string, string>()
  return {
    data,
    getItem: (key) => data.get(key) ?? null,
    setItem: (key, value) => void data.set(key, value),
    removeItem: (key) => void data.delete(key),
  }
}

export interface ClientFixture {
  harness: Harness
  client: Latchkey
  storage: ReturnType<typeof memoryStorage>
  /** Another client on the same service and storage (a reload of the page). */
  reload(overrides?: Partial<LatchkeyConfig>): Latchkey
  /**
   * A new sub-organization whose root users' API keys are fresh client session keys (created by
   * the dev root key, as a back office would), with the first user's session active.
   */
  signUpDirect(options?: { users?: number; threshold?: number; lifetimeSeconds?: number }): Promise<{
    organizationId: string
    userIds: string[]
    sessions: Session[]
  }>
}

export async function createClientFixture(
  overrides: Partial<LatchkeyConfig> = {},
  serviceOptions: Parameters<typeof createHarness>[0] = {},
): Promise<ClientFixture> {
  // A fresh IndexedDB per fixture: each test sees only its own keys.
  globalThis.indexedDB = new IDBFactory()
  const harness = await createHarness({ clock: { now: () => Date.now() }, ...serviceOptions } as never)
  const storage = memoryStorage()
  const config = (more: Partial<LatchkeyConfig> = {}): LatchkeyConfig => ({
    authProxyUrl: SERVICE_URL,
    baseUrl: SERVICE_URL,
    authProxyConfigId: harness.service.dev.authProxyConfigId ?? 'no-proxy-config',
    organizationId: harness.organizationId,
    fetch: harness.service.fetch,
    storage,
    trustedSignerPublicKey: harness.service.dev.signerPublicKey,
    polling: { intervalMs: 10, timeoutMs: 2_000 },
    ...overrides,
    ...more,
  })
  const client = createLatchkey(config())
  return {
    harness,
    client,
    storage,
    reload: (more) => createLatchkey(config(more)),
    async signUpDirect({ users = 1, threshold = 1, lifetimeSeconds = 900 } = {}) {
      await client.hydrate()
      const keys = await Promise.all(
        Array.from({ length: users }, () => client.keyStore.create({ scope: client.config.organizationId })),
      )
      const reply = await harness.submit('create_sub_organization', {
        subOrganizationName: `Org ${crypto.randomUUID().slice(0, 8)}`,
        rootUsers: keys.map((key, index) => ({
          userName: `User ${index + 1}`,
          apiKeys: [
            {
              apiKeyName: `session ${index + 1}`,
              publicKey: key.publicKey,
              curveType: 'API_KEY_CURVE_P256',
              expirationSeconds: String(lifetimeSeconds),
            },
            // A long-lived credential beside the session key, as real users have (passkey, wallet...):
            // the service refuses to delete a sole root user's last credential.
            testKey().apiKey('recovery key'),
          ],
          authenticators: [],
          oauthProviders: [],
        })),
        rootQuorumThreshold: threshold,
      })
      if (reply.status !== 200) throw new Error(`create_sub_organization: ${JSON.stringify(reply.body)}`)
      const result = reply.body.activity.result.createSubOrganizationResultV7
      const sessions: Session[] = []
      // Added last-to-first so the first user's session ends up active.
      for (let index = keys.length - 1; index >= 0; index--) {
        sessions.unshift(
          addSessionFromKey(client, {
            publicKey: (keys[index] as { publicKey: string }).publicKey,
            userId: result.rootUserIds[index],
            organizationId: result.subOrganizationId,
            lifetimeSeconds,
            method: 'api-key',
            label: `User ${index + 1}`,
          }),
        )
      }
      return { organizationId: result.subOrganizationId, userIds: result.rootUserIds, sessions }
    },
  }
}
