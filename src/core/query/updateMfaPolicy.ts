import {
  type UpdateMfaPolicyParameters,
  type UpdateMfaPolicyReturnType,
  updateMfaPolicy,
} from '../actions/activities/updateMfaPolicy.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `updateMfaPolicy`; `meta.invalidates` names the queries it makes stale. */
export function updateMfaPolicyMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'updateMfaPolicy'] as const,
    mutationFn: (variables: UpdateMfaPolicyParameters): Promise<UpdateMfaPolicyReturnType> =>
      updateMfaPolicy(client, variables),
    meta: { invalidates: ['mfaPolicies'] } satisfies LatchkeyMutationMeta,
  }
}
