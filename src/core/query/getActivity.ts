import {
  type GetActivityParameters,
  type GetActivityReturnType,
  getActivity,
} from '../actions/queries/getActivity.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetActivityQueryParameters = Partial<GetActivityParameters>

export const getActivityQueryKey = (
  parameters: Omit<GetActivityQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('activity', parameters)
export type GetActivityQueryKey = ReturnType<typeof getActivityQueryKey>

/** Query options for `getActivity`; disabled until a session and activityId exist. */
export function getActivityQueryOptions(client: Latchkey, parameters: GetActivityQueryParameters) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getActivityQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetActivityReturnType> =>
      getActivity(client, {
        ...parameters,
        sessionId: scope.sessionId ?? undefined,
        signal,
      } as GetActivityParameters),
    enabled: enabled && parameters.activityId !== undefined,
  }
}
