import type { UseQueryResult } from '@tanstack/react-query'
import type { GetAuthenticatorReturnType } from '../../core/actions/queries/getAuthenticator.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import {
  type GetAuthenticatorQueryParameters,
  getAuthenticatorQueryOptions,
} from '../../core/query/getAuthenticator.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseAuthenticatorParameters = GetAuthenticatorQueryParameters &
  ClientParameter &
  QueryParameter<GetAuthenticatorReturnType>
export type UseAuthenticatorReturnType = UseQueryResult<GetAuthenticatorReturnType, LatchkeyError>

/** One passkey (`get_authenticator`). */
export function useAuthenticator(parameters: UseAuthenticatorParameters = {}): UseAuthenticatorReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getAuthenticatorQueryOptions(client, rest), query, rest.sessionId)
}
