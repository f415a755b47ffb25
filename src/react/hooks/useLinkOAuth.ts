import type { UseMutationResult } from '@tanstack/react-query'
import type { LinkOAuthParameters, LinkOAuthReturnType } from '../../core/actions/activities/linkOAuth.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { linkOAuthMutationOptions } from '../../core/query/linkOAuth.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseLinkOAuthParameters = ClientParameter &
  MutationParameter<LinkOAuthReturnType, LinkOAuthParameters>
export type UseLinkOAuthReturnType = UseMutationResult<
  LinkOAuthReturnType,
  LatchkeyError,
  LinkOAuthParameters
>

/**
 * Links an OAuth identity to the signed-in account (`linkOAuth`): `mutate({ provider: 'google' })`
 * opens the provider's window, then refreshes the user and linked-logins queries. An identity
 * another account holds fails with `ALREADY_EXISTS`, a closed window with `USER_CANCELLED`, an MFA
 * policy with `MfaRequiredError`.
 */
export function useLinkOAuth(parameters: UseLinkOAuthParameters = {}): UseLinkOAuthReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<LinkOAuthReturnType, LinkOAuthParameters>(
    linkOAuthMutationOptions(client),
    parameters.mutation,
  )
}
