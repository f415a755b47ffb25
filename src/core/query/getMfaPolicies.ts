import {
  type GetMfaPoliciesParameters,
  type GetMfaPoliciesReturnType,
  getMfaPolicies,
} from '../actions/queries/getMfaPolicies.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetMfaPoliciesQueryParameters = GetMfaPoliciesParameters

export const getMfaPoliciesQueryKey = (
  parameters: Omit<GetMfaPoliciesQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('mfaPolicies', parameters)
export type GetMfaPoliciesQueryKey = ReturnType<typeof getMfaPoliciesQueryKey>

/** Query options for `getMfaPolicies`; disabled until a session exists. */
export function getMfaPoliciesQueryOptions(client: Latchkey, parameters: GetMfaPoliciesQueryParameters = {}) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getMfaPoliciesQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetMfaPoliciesReturnType> =>
      getMfaPolicies(client, { ...parameters, sessionId: scope.sessionId ?? undefined, signal }),
    enabled,
  }
}
