import {
  type DeleteMfaPolicyParameters,
  type DeleteMfaPolicyReturnType,
  deleteMfaPolicy,
} from '../actions/activities/deleteMfaPolicy.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `deleteMfaPolicy`; `meta.invalidates` names the queries it makes stale. */
export function deleteMfaPolicyMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'deleteMfaPolicy'] as const,
    mutationFn: (variables: DeleteMfaPolicyParameters): Promise<DeleteMfaPolicyReturnType> =>
      deleteMfaPolicy(client, variables),
    meta: { invalidates: ['mfaPolicies'] } satisfies LatchkeyMutationMeta,
  }
}
