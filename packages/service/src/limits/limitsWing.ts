import type { ServicePlugin } from '../kernel/registry.ts'
import { SPEND_GUARD, type SpendGuard } from '../kernel/spending.ts'
import {
  createSpendingLimit,
  deleteSpendingLimit,
  listSpendingLimits,
  updateSpendingLimit,
} from './limitActivities.ts'
import { spendGuard } from './spendGuard.ts'

/** The name the spending-limits wing is loaded under. */
export const LIMITS_WING = 'limits'

/**
 * The spending-limits wing (issue 37): the activities `latchkey_create_spending_limit`,
 * `latchkey_update_spending_limit`, `latchkey_delete_spending_limit`, the query
 * `latchkey_list_spending_limits`, and the spend guard (kernel/spending.ts) that the signing and
 * sending handlers run in their own transaction: it refuses a signature over a limit covering
 * it, or reserves what it spends.
 */
export function limitsWing(): ServicePlugin<SpendGuard> {
  return {
    name: LIMITS_WING,
    activities: {
      latchkey_create_spending_limit: createSpendingLimit,
      latchkey_update_spending_limit: updateSpendingLimit,
      latchkey_delete_spending_limit: deleteSpendingLimit,
    },
    queries: { latchkey_list_spending_limits: listSpendingLimits },
    state: { key: SPEND_GUARD, load: () => spendGuard },
  }
}
