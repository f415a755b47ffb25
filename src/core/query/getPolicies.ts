import {
  type GetPoliciesParameters,
  type GetPoliciesReturnType,
  getPolicies,
} from '../actions/queries/getPolicies.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetPoliciesQueryParameters = GetPoliciesParameters

export const getPoliciesQueryKey = (
  parameters: Omit<GetPoliciesQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('policies', parameters)
export type GetPoliciesQueryKey = ReturnType<typeof getPoliciesQueryKey>

/** Query options for `getPolicies`; disabled until a session exists. */
export function getPoliciesQueryOptions(client: Latchkey, parameters: GetPoliciesQueryParameters = {}) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getPoliciesQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetPoliciesReturnType> =>
      getPolicies(client, { ...parameters, sessionId: scope.sessionId ?? undefined, signal }),
    enabled,
  }
}
