import { decodeApiKeyStamp, STAMP_HEADER } from '@latchkey/protocol'
import type { Runtime } from '../kernel/Runtime.ts'
import type { Registry } from '../kernel/registry.ts'
import { apiKeyInOrganization } from '../kernel/store/model.ts'
import type { Lookup, Reads } from '../kernel/store/Store.ts'

/**
 * The reads an API-key-stamped request makes before its own work, read at once: the credential
 * with the stamp's public key in the organization the body names and its user, that
 * organization, what the plugins' checks read for it (`ServicePlugin.lookups`) and what its entry
 * asks for there (`more`: an activity's policies and what its handler reads). On PostgreSQL that is one round trip
 * instead of several in a row (SQLite reads them through its read cache as they come), and one
 * snapshot. Anything else the request reads goes to the store as before; a request without an
 * `X-Stamp` (or one that does not decode, which authentication refuses), or naming no
 * organization, reads nothing ahead.
 */
export async function requestReads(
  runtime: Runtime,
  registry: Registry,
  {
    headers,
    organizationId,
    more = () => [],
  }: {
    headers: Headers
    /** The organization the body names, when it names one. */
    organizationId: string | undefined
    more?: (organizationId: string) => Lookup[]
  },
): Promise<Reads> {
  const header = headers.get(STAMP_HEADER)
  // A backend that reads nothing ahead (`Store.prefetch`, SQLite) skips decoding the stamp a
  // second time: on its hot path that decoding is a measurable share of a signing.
  if (!header || !runtime.store.backend.readsAhead) return runtime.store
  let publicKey: string
  try {
    publicKey = decodeApiKeyStamp(header).publicKey.toLowerCase()
  } catch {
    return runtime.store
  }
  // Public keys are at most 130 hex digits, ids far shorter: anything longer is refused later.
  if (publicKey.length > 200) return runtime.store
  // Without an organization named (a body authentication or its check refuses, mostly), nothing
  // is read ahead: the credential would be every holder of the key, and the request's stamp has
  // not been verified yet (`authenticate` reads one row, after verifying it).
  if (organizationId === undefined || organizationId.length > 200) return runtime.store
  const named = organizationId
  // Admission's reads: the credential, its user, the organization named. The credential as
  // authentication reads it first (`apiKeyFor`): the key in the organization the body names, one
  // row however many organizations hold the key.
  const key = { field: 'keyInOrganization', value: apiKeyInOrganization(publicKey, named) } as const
  const lookups: Lookup[] = [
    { table: 'apiKeys', ...key },
    { table: 'users', via: { table: 'apiKeys', ...key, column: 'userId' } },
    { table: 'organizations', id: named },
    // The decision's and the handler's (an ordered transaction reads them from here too, all
    // but what its plugin reads again after its lock: `ServicePlugin.serializedLookups`).
    ...registry.plugins.flatMap((plugin) => plugin.lookups?.(named) ?? []),
    ...more(named),
  ]
  return runtime.store.prefetch(lookups)
}
