import type { UseQueryResult } from '@tanstack/react-query'
import type { GetUsersReturnType } from '../../core/actions/queries/getUsers.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { type GetUsersQueryParameters, getUsersQueryOptions } from '../../core/query/getUsers.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseUsersParameters = GetUsersQueryParameters &
  ClientParameter &
  QueryParameter<GetUsersReturnType>
export type UseUsersReturnType = UseQueryResult<GetUsersReturnType, LatchkeyError>

/** Users of the organization (`list_users`). */
export function useUsers(parameters: UseUsersParameters = {}): UseUsersReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getUsersQueryOptions(client, rest), query, rest.sessionId)
}
