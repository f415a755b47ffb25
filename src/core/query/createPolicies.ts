import {
  type CreatePoliciesParameters,
  type CreatePoliciesReturnType,
  createPolicies,
} from '../actions/activities/createPolicies.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createPolicies`; `meta.invalidates` names the queries it makes stale. */
export function createPoliciesMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createPolicies'] as const,
    mutationFn: (variables: CreatePoliciesParameters): Promise<CreatePoliciesReturnType> =>
      createPolicies(client, variables),
    meta: { invalidates: ['policies', 'policy'] } satisfies LatchkeyMutationMeta,
  }
}
