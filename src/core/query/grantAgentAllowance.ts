import {
  type GrantAgentAllowanceParameters,
  type GrantAgentAllowanceReturnType,
  grantAgentAllowance,
} from '../actions/activities/grantAgentAllowance.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `grantAgentAllowance`; `meta.invalidates` names the queries it makes stale. */
export function grantAgentAllowanceMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'grantAgentAllowance'] as const,
    mutationFn: (variables: GrantAgentAllowanceParameters): Promise<GrantAgentAllowanceReturnType> =>
      grantAgentAllowance(client, variables),
    meta: {
      invalidates: ['spendingLimits', 'users', 'user', 'apiKeys', 'policies', 'policy'],
    } satisfies LatchkeyMutationMeta,
  }
}
