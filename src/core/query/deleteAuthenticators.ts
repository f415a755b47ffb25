import {
  type DeleteAuthenticatorsParameters,
  type DeleteAuthenticatorsReturnType,
  deleteAuthenticators,
} from '../actions/activities/deleteAuthenticators.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `deleteAuthenticators`; `meta.invalidates` names the queries it makes stale. */
export function deleteAuthenticatorsMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'deleteAuthenticators'] as const,
    mutationFn: (variables: DeleteAuthenticatorsParameters): Promise<DeleteAuthenticatorsReturnType> =>
      deleteAuthenticators(client, variables),
    meta: { invalidates: ['authenticator', 'user', 'users', 'linkedLogins'] } satisfies LatchkeyMutationMeta,
  }
}
