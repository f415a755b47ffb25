import {
  type UpdatePolicyParameters,
  type UpdatePolicyReturnType,
  updatePolicy,
} from '../actions/activities/updatePolicy.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `updatePolicy`; `meta.invalidates` names the queries it makes stale. */
export function updatePolicyMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'updatePolicy'] as const,
    mutationFn: (variables: UpdatePolicyParameters): Promise<UpdatePolicyReturnType> =>
      updatePolicy(client, variables),
    meta: { invalidates: ['policies', 'policy'] } satisfies LatchkeyMutationMeta,
  }
}
