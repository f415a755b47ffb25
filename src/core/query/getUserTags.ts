import {
  type GetUserTagsParameters,
  type GetUserTagsReturnType,
  getUserTags,
} from '../actions/queries/getUserTags.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetUserTagsQueryParameters = GetUserTagsParameters

export const getUserTagsQueryKey = (
  parameters: Omit<GetUserTagsQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('userTags', parameters)
export type GetUserTagsQueryKey = ReturnType<typeof getUserTagsQueryKey>

/** Query options for `getUserTags`; disabled until a session exists. */
export function getUserTagsQueryOptions(client: Latchkey, parameters: GetUserTagsQueryParameters = {}) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getUserTagsQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetUserTagsReturnType> =>
      getUserTags(client, { ...parameters, sessionId: scope.sessionId ?? undefined, signal }),
    enabled: enabled,
  }
}
