import { type GetUsersParameters, type GetUsersReturnType, getUsers } from '../actions/queries/getUsers.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetUsersQueryParameters = GetUsersParameters

export const getUsersQueryKey = (
  parameters: Omit<GetUsersQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('users', parameters)
export type GetUsersQueryKey = ReturnType<typeof getUsersQueryKey>

/** Query options for `getUsers`; disabled until a session exists. */
export function getUsersQueryOptions(client: Latchkey, parameters: GetUsersQueryParameters = {}) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getUsersQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetUsersReturnType> =>
      getUsers(client, { ...parameters, sessionId: scope.sessionId ?? undefined, signal }),
    enabled: enabled,
  }
}
