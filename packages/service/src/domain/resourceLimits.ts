import { LimitError } from '../kernel/base/errors.ts'
import type { TableName, Tables } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Reads.ts'

/**
 * The most records of a kind one organization (or one user, one wallet) holds. Anyone holds an
 * organization of their own (a sub-organization, by wallet sign-up), and the per-call maximums
 * (100 users, 100 accounts a call) bound nothing but a call: without these, its rows, and the
 * disk, grew by the rate limit alone. Generous, far above what an app meets (the published
 * service's own limits are lower: 100 users, 100 wallets, 10 API keys a user); each is counted in
 * the activity's transaction, through the index on its owner (SERIALIZABLE on PostgreSQL: two
 * creates at the cap never both pass), as `MAX_POLICIES` is.
 */
export const RESOURCE_LIMITS = {
  usersPerOrganization: 10_000,
  walletsPerOrganization: 10_000,
  walletAccountsPerOrganization: 100_000,
  privateKeysPerOrganization: 1_000,
  userTagsPerOrganization: 1_000,
  /** API keys a user holds, not counting login sessions' keys (those expire and are swept). */
  apiKeysPerUser: 100,
  authenticatorsPerUser: 100,
  /**
   * OAuth identities linked to a user, each audience (client id) of one identity a row: an
   * anonymous lookup by OIDC token reads every row of the token's subject.
   */
  oauthProvidersPerUser: 100,
  /** Write-only on-ramp credentials (one row of up to ~23.5 KB each; no activity deletes one). */
  fiatCredentialsPerOrganization: 10,
} as const

export type ResourceLimit = keyof typeof RESOURCE_LIMITS

/** What each limit counts: rows of a table by their owner's indexed column. */
const COUNTED: { [L in ResourceLimit]: { table: TableName; by: string; what: string } } = {
  usersPerOrganization: { table: 'users', by: 'organizationId', what: 'users' },
  walletsPerOrganization: { table: 'wallets', by: 'organizationId', what: 'wallets' },
  walletAccountsPerOrganization: { table: 'walletAccounts', by: 'organizationId', what: 'wallet accounts' },
  privateKeysPerOrganization: { table: 'privateKeys', by: 'organizationId', what: 'private keys' },
  userTagsPerOrganization: { table: 'userTags', by: 'organizationId', what: 'user tags' },
  apiKeysPerUser: { table: 'apiKeys', by: 'userId', what: 'API keys' },
  authenticatorsPerUser: { table: 'authenticators', by: 'userId', what: 'authenticators' },
  oauthProvidersPerUser: { table: 'oauthProviders', by: 'userId', what: 'OAuth providers' },
  fiatCredentialsPerOrganization: {
    table: 'fiatCredentials',
    by: 'organizationId',
    what: 'fiat on-ramp credentials',
  },
}

/**
 * Refuses adding `adding` records when the owner holds `held` of them already and the sum would
 * pass `limit`: 412 `RESOURCE_LIMIT_REACHED` naming `field`, the limit and its value.
 */
export function refuseOverLimit(
  limit: ResourceLimit,
  { held, adding, owner, field }: { held: number; adding: number; owner: string; field: string },
): void {
  const max = RESOURCE_LIMITS[limit]
  if (held + adding <= max) return
  const { what, by } = COUNTED[limit]
  throw new LimitError({
    code: 'RESOURCE_LIMIT_REACHED',
    field,
    message: `${by === 'userId' ? 'user' : 'organization'} ${owner} holds ${held} ${what}; at most ${max} (${limit})`,
    extra: { limit, max },
  })
}

/**
 * Counts what `limit` counts for `owner` (an organization's or a user's id) in `reads` (the
 * activity's transaction: one count statement through the owner's index, never the rows) and
 * refuses `adding` more past it.
 */
export async function checkResourceLimit(
  reads: Reads,
  limit: ResourceLimit,
  { owner, adding, field }: { owner: string; adding: number; field: string },
): Promise<void> {
  const { table, by } = COUNTED[limit]
  const held = await reads.count(table, by as keyof Tables[typeof table] & string, owner)
  refuseOverLimit(limit, { held, adding, owner, field })
}

/**
 * Counts held further from the limit than this share of it need not be counted again in the
 * transaction (`farFromLimit`): an activity that runs on a snapshot (`createsOnly`) counts before
 * it, and only one close to the cap is counted again, SERIALIZABLE; more than a tenth of the cap
 * made at once in one organization, while one create is in flight, is what it would take to pass it.
 */
const SLACK = 0.1

/** True when `held` (counted before the transaction) plus `adding` is far below `limit`. */
export const farFromLimit = (limit: ResourceLimit, held: number, adding: number): boolean =>
  held + adding <= RESOURCE_LIMITS[limit] * (1 - SLACK)
