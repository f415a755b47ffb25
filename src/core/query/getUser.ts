import { type GetUserParameters, type GetUserReturnType, getUser } from '../actions/queries/getUser.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetUserQueryParameters = Partial<GetUserParameters>

export const getUserQueryKey = (
  parameters: Omit<GetUserQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('user', parameters)

/** Query options for `getUser`; the user defaults to the session's own. */
export function getUserQueryOptions(client: Latchkey, parameters: GetUserQueryParameters = {}) {
  const { session, scope, enabled } = sessionScope(client, parameters.sessionId)
  const userId = parameters.userId ?? session?.userId
  return {
    queryKey: getUserQueryKey({ ...scope, ...parameters, userId, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetUserReturnType> =>
      getUser(client, {
        ...parameters,
        userId: userId as string,
        sessionId: scope.sessionId ?? undefined,
        signal,
      }),
    enabled: enabled && userId !== undefined,
  }
}
