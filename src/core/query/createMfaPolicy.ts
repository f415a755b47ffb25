import {
  type CreateMfaPolicyParameters,
  type CreateMfaPolicyReturnType,
  createMfaPolicy,
} from '../actions/activities/createMfaPolicy.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createMfaPolicy`; `meta.invalidates` names the queries it makes stale. */
export function createMfaPolicyMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createMfaPolicy'] as const,
    mutationFn: (variables: CreateMfaPolicyParameters): Promise<CreateMfaPolicyReturnType> =>
      createMfaPolicy(client, variables),
    meta: { invalidates: ['mfaPolicies'] } satisfies LatchkeyMutationMeta,
  }
}
