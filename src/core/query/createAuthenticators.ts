import {
  type CreateAuthenticatorsParameters,
  type CreateAuthenticatorsReturnType,
  createAuthenticators,
} from '../actions/activities/createAuthenticators.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createAuthenticators`; `meta.invalidates` names the queries it makes stale. */
export function createAuthenticatorsMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createAuthenticators'] as const,
    mutationFn: (variables: CreateAuthenticatorsParameters): Promise<CreateAuthenticatorsReturnType> =>
      createAuthenticators(client, variables),
    meta: { invalidates: ['authenticator', 'user', 'users', 'linkedLogins'] } satisfies LatchkeyMutationMeta,
  }
}
