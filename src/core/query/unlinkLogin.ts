import {
  type UnlinkLoginParameters,
  type UnlinkLoginReturnType,
  unlinkLogin,
} from '../actions/activities/unlinkLogin.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `unlinkLogin`; `meta.invalidates` names the queries it makes stale. */
export function unlinkLoginMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'unlinkLogin'] as const,
    mutationFn: (variables: UnlinkLoginParameters): Promise<UnlinkLoginReturnType> =>
      unlinkLogin(client, variables),
    meta: {
      invalidates: ['linkedLogins', 'user', 'users', 'authenticator', 'apiKeys'],
    } satisfies LatchkeyMutationMeta,
  }
}
