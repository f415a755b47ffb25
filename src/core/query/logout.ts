import { type LogoutParameters, type LogoutReturnType, logout } from '../actions/auth/logout.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `logout`; `meta.invalidates` names the queries it makes stale. */
export function logoutMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'logout'] as const,
    mutationFn: (variables: LogoutParameters = {}): Promise<LogoutReturnType> => logout(client, variables),
    meta: { invalidates: ['*'] } satisfies LatchkeyMutationMeta,
  }
}
