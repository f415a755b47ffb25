import {
  type RefreshSessionParameters,
  type RefreshSessionReturnType,
  refreshSession,
} from '../actions/auth/refreshSession.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `refreshSession`; `meta.invalidates` names the queries it makes stale. */
export function refreshSessionMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'refreshSession'] as const,
    mutationFn: (variables: RefreshSessionParameters = {}): Promise<RefreshSessionReturnType> =>
      refreshSession(client, variables),
    meta: { invalidates: [] } satisfies LatchkeyMutationMeta,
  }
}
