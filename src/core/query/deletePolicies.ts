import {
  type DeletePoliciesParameters,
  type DeletePoliciesReturnType,
  deletePolicies,
} from '../actions/activities/deletePolicies.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `deletePolicies`; `meta.invalidates` names the queries it makes stale. */
export function deletePoliciesMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'deletePolicies'] as const,
    mutationFn: (variables: DeletePoliciesParameters): Promise<DeletePoliciesReturnType> =>
      deletePolicies(client, variables),
    meta: { invalidates: ['policies', 'policy'] } satisfies LatchkeyMutationMeta,
  }
}
