import type { ServicePlugin } from '../kernel/registry.ts'
import { SPEND_GUARD, type SpendGuard, spendLockOf } from '../kernel/spending.ts'
import { anyRows } from '../kernel/store/Store.ts'
import {
  createSpendingLimit,
  deleteSpendingLimit,
  listSpendingLimits,
  updateSpendingLimit,
} from './limitActivities.ts'
import {
  confineToProfile,
  createSessionProfile,
  deleteSessionProfile,
  END_PROFILE_SESSIONS_JOB,
  endProfileSessionsHandler,
  getSessionProfile,
  getSessionProfiles,
  updateSessionProfile,
} from './sessionProfiles.ts'
import { createSpendGuard } from './spendGuard.ts'

/** `createService`'s options of the spending-limits wing (`[limits]`). */
export interface LimitsWingOptions {
  limits?: LimitsOptions
}

export interface LimitsOptions {
  /**
   * EVM chains (CAIP-2), besides the service's own list (`valueOnlyChains.ts`), whose native coin
   * leaves an account only as a call's value: under a native limit of one, a call into a contract
   * with calldata is signed and its value counted, not refused.
   */
  valueOnlyChains?: readonly string[]
}

/** The name the spending-limits wing is loaded under. */
export const LIMITS_WING = 'limits'

/**
 * The spending-limits wing (issue 37): the activities `latchkey_create_spending_limit`,
 * `latchkey_update_spending_limit`, `latchkey_delete_spending_limit`, the query
 * `latchkey_list_spending_limits`, and the spend guard (kernel/spending.ts) that the signing and
 * sending handlers run in their own transaction: it refuses a signature over a limit covering
 * it, or reserves what it spends. And session profiles (sessionProfiles.ts): the published
 * `create_session_profile`, `latchkey_update/delete_session_profile`, the queries
 * `get_session_profile(s)`, the confinement of every session issued under one to its scope, and the
 * job that deletes a deleted profile's session keys (`limits.end_profile_sessions`).
 */
export function limitsWing(options: LimitsWingOptions = {}): ServicePlugin<SpendGuard> {
  const spendGuard = createSpendGuard(options.limits)
  return {
    name: LIMITS_WING,
    activities: {
      latchkey_create_spending_limit: createSpendingLimit,
      latchkey_update_spending_limit: updateSpendingLimit,
      latchkey_delete_spending_limit: deleteSpendingLimit,
      create_session_profile: createSessionProfile,
      latchkey_update_session_profile: updateSessionProfile,
      latchkey_delete_session_profile: deleteSessionProfile,
    },
    queries: {
      latchkey_list_spending_limits: listSpendingLimits,
      get_session_profile: getSessionProfile,
      get_session_profiles: getSessionProfiles,
    },
    state: {
      key: SPEND_GUARD,
      load: (runtime) => {
        // A deleted profile's session keys go after its deletion, a batch a transaction.
        runtime.jobs.handle(END_PROFILE_SESSIONS_JOB, endProfileSessionsHandler(runtime))
        return spendGuard
      },
    },
    confine: confineToProfile,
    // A deleted sub-organization's limits, their usage rows and its session profiles go with it.
    async forget(tx, { organizationId }) {
      if (organizationId === undefined) return
      for (const table of ['spendingLimits', 'spendingLimitUsage', 'sessionProfiles'] as const)
        for (const row of await tx.findBy(table, 'organizationId', organizationId))
          await tx.delete(table, row.id)
    },
    // Every writer of an organization's limit state in one order, across processes: the limit
    // changes always, the spends where the organization has a limit (kernel/spending.ts).
    serializes: async ({ path, organization, reads }) =>
      LIMIT_PATHS.has(path) ||
      ((SPENDING_PATHS.has(path) || path === 'delete_sub_organization') &&
        (await anyRows(reads, 'spendingLimits', 'organizationId', organization.id)))
        ? spendLockOf(organization.id)
        : undefined,
    // What the spend guard reads under the lock: the organization's limits and usage rows, read
    // in the transaction's first statement (the rest of a signing's reads are from before the lock).
    serializedLookups: (organizationId) => [
      { table: 'spendingLimits', field: 'organizationId', value: organizationId },
      { table: 'spendingLimitUsage', field: 'organizationId', value: organizationId },
    ],
  }
}

/** The activities that change what a spend's decision reads: the organization's limits. */
const LIMIT_PATHS = new Set([
  'latchkey_create_spending_limit',
  'latchkey_update_spending_limit',
  'latchkey_delete_spending_limit',
])

/**
 * The activities whose signature a limit may count. In an organization with limits their
 * transactions hold the organization's spend lock: every spend under a limit rewrites its one
 * usage row, each in turn, reading the last one's commit, in every process of the database.
 */
const SPENDING_PATHS = new Set([
  'sign_transaction',
  'sign_raw_payload',
  'sign_raw_payloads',
  'eth_send_transaction',
  'sol_send_transaction',
])
