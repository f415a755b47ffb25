import {
  type CreatePolicyParameters,
  type CreatePolicyReturnType,
  createPolicy,
} from '../actions/activities/createPolicy.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createPolicy`; `meta.invalidates` names the queries it makes stale. */
export function createPolicyMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createPolicy'] as const,
    mutationFn: (variables: CreatePolicyParameters): Promise<CreatePolicyReturnType> =>
      createPolicy(client, variables),
    meta: { invalidates: ['policies', 'policy'] } satisfies LatchkeyMutationMeta,
  }
}
