import {
  type RevokeAgentAllowanceParameters,
  type RevokeAgentAllowanceReturnType,
  revokeAgentAllowance,
} from '../actions/activities/revokeAgentAllowance.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `revokeAgentAllowance`; `meta.invalidates` names the queries it makes stale. */
export function revokeAgentAllowanceMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'revokeAgentAllowance'] as const,
    mutationFn: (variables: RevokeAgentAllowanceParameters): Promise<RevokeAgentAllowanceReturnType> =>
      revokeAgentAllowance(client, variables),
    meta: {
      invalidates: ['spendingLimits', 'users', 'user', 'apiKeys', 'policies', 'policy'],
    } satisfies LatchkeyMutationMeta,
  }
}
