import {
  type DeleteSpendingLimitParameters,
  type DeleteSpendingLimitReturnType,
  deleteSpendingLimit,
} from '../actions/activities/deleteSpendingLimit.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `deleteSpendingLimit`; `meta.invalidates` names the queries it makes stale. */
export function deleteSpendingLimitMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'deleteSpendingLimit'] as const,
    mutationFn: (variables: DeleteSpendingLimitParameters): Promise<DeleteSpendingLimitReturnType> =>
      deleteSpendingLimit(client, variables),
    meta: { invalidates: ['spendingLimits'] } satisfies LatchkeyMutationMeta,
  }
}
