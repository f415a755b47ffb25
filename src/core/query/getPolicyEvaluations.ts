import {
  type GetPolicyEvaluationsParameters,
  type GetPolicyEvaluationsReturnType,
  getPolicyEvaluations,
} from '../actions/queries/getPolicyEvaluations.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetPolicyEvaluationsQueryParameters = Partial<GetPolicyEvaluationsParameters>

export const getPolicyEvaluationsQueryKey = (
  parameters: Omit<GetPolicyEvaluationsQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('policyEvaluations', parameters)
export type GetPolicyEvaluationsQueryKey = ReturnType<typeof getPolicyEvaluationsQueryKey>

/** Query options for `getPolicyEvaluations`; disabled until a session and activityId exist. */
export function getPolicyEvaluationsQueryOptions(
  client: Latchkey,
  parameters: GetPolicyEvaluationsQueryParameters,
) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getPolicyEvaluationsQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetPolicyEvaluationsReturnType> =>
      getPolicyEvaluations(client, {
        ...parameters,
        sessionId: scope.sessionId ?? undefined,
        signal,
      } as GetPolicyEvaluationsParameters),
    enabled: enabled && parameters.activityId !== undefined,
  }
}
