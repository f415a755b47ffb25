import {
  type UpdateSpendingLimitParameters,
  type UpdateSpendingLimitReturnType,
  updateSpendingLimit,
} from '../actions/activities/updateSpendingLimit.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `updateSpendingLimit`; `meta.invalidates` names the queries it makes stale. */
export function updateSpendingLimitMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'updateSpendingLimit'] as const,
    mutationFn: (variables: UpdateSpendingLimitParameters): Promise<UpdateSpendingLimitReturnType> =>
      updateSpendingLimit(client, variables),
    meta: { invalidates: ['spendingLimits'] } satisfies LatchkeyMutationMeta,
  }
}
