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
  }
}
