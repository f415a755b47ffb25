import type { ServicePlugin } from '../kernel/registry.ts'
import { SPEND_GUARD, type SpendGuard } from '../kernel/spending.ts'
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
  getSessionProfile,
  getSessionProfiles,
  updateSessionProfile,
} from './sessionProfiles.ts'
import { spendGuard } from './spendGuard.ts'

/** The name the spending-limits wing is loaded under. */
export const LIMITS_WING = 'limits'

/**
 * The spending-limits wing (issue 37): the activities `latchkey_create_spending_limit`,
 * `latchkey_update_spending_limit`, `latchkey_delete_spending_limit`, the query
 * `latchkey_list_spending_limits`, and the spend guard (kernel/spending.ts) that the signing and
 * sending handlers run in their own transaction: it refuses a signature over a limit covering
 * it, or reserves what it spends. And session profiles (sessionProfiles.ts): the published
 * `create_session_profile`, `latchkey_update/delete_session_profile`, the queries
 * `get_session_profile(s)`, and the confinement of every session issued under one to its scope.
 */
export function limitsWing(): ServicePlugin<SpendGuard> {
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
    state: { key: SPEND_GUARD, load: () => spendGuard },
    confine: confineToProfile,
    serializes: async ({ path, organization, reads }) =>
      SPENDING_PATHS.has(path) &&
      (await reads.findBy('spendingLimits', 'organizationId', organization.id)).length > 0
        ? `spend:${organization.id}`
        : undefined,
  }
}

/**
 * The activities whose signature a limit may count. In an organization with limits this process
 * runs their transactions one at a time: every spend under a limit rewrites its one usage row, and
 * on PostgreSQL concurrent rewrites would fail each other's commit (SERIALIZABLE) and rerun until
 * some ran out of reruns. Across instances they still race, as few at once as there are instances.
 */
const SPENDING_PATHS = new Set([
  'sign_transaction',
  'sign_raw_payload',
  'sign_raw_payloads',
  'eth_send_transaction',
  'sol_send_transaction',
])
