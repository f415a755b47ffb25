import {
  type DeletePolicyParameters,
  type DeletePolicyReturnType,
  deletePolicy,
} from '../actions/activities/deletePolicy.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `deletePolicy`; `meta.invalidates` names the queries it makes stale. */
export function deletePolicyMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'deletePolicy'] as const,
    mutationFn: (variables: DeletePolicyParameters): Promise<DeletePolicyReturnType> =>
      deletePolicy(client, variables),
    meta: { invalidates: ['policies', 'policy'] } satisfies LatchkeyMutationMeta,
  }
}
