import type { UseQueryResult } from '@tanstack/react-query'
import type { GetUserReturnType } from '../../core/actions/queries/getUser.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { type GetUserQueryParameters, getUserQueryOptions } from '../../core/query/getUser.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseUserParameters = GetUserQueryParameters & ClientParameter & QueryParameter<GetUserReturnType>
export type UseUserReturnType = UseQueryResult<GetUserReturnType, LatchkeyError>

/** The session’s user (or `userId`), with authenticators, API keys and OAuth providers (`get_user`). */
export function useUser(parameters: UseUserParameters = {}): UseUserReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getUserQueryOptions(client, rest), query, rest.sessionId)
}
