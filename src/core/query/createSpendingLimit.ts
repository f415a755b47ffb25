import {
  type CreateSpendingLimitParameters,
  type CreateSpendingLimitReturnType,
  createSpendingLimit,
} from '../actions/activities/createSpendingLimit.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createSpendingLimit`; `meta.invalidates` names the queries it makes stale. */
export function createSpendingLimitMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createSpendingLimit'] as const,
    mutationFn: (variables: CreateSpendingLimitParameters): Promise<CreateSpendingLimitReturnType> =>
      createSpendingLimit(client, variables),
    meta: { invalidates: ['spendingLimits'] } satisfies LatchkeyMutationMeta,
  }
}
