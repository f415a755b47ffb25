import {
  type GetPolicyParameters,
  type GetPolicyReturnType,
  getPolicy,
} from '../actions/queries/getPolicy.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetPolicyQueryParameters = Partial<GetPolicyParameters>

export const getPolicyQueryKey = (
  parameters: Omit<GetPolicyQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('policy', parameters)
export type GetPolicyQueryKey = ReturnType<typeof getPolicyQueryKey>

/** Query options for `getPolicy`; disabled until a session and policyId exist. */
export function getPolicyQueryOptions(client: Latchkey, parameters: GetPolicyQueryParameters) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getPolicyQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetPolicyReturnType> =>
      getPolicy(client, {
        ...parameters,
        sessionId: scope.sessionId ?? undefined,
        signal,
      } as GetPolicyParameters),
    enabled: enabled && parameters.policyId !== undefined,
  }
}
