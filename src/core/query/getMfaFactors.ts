import {
  type GetMfaFactorsParameters,
  type GetMfaFactorsReturnType,
  getMfaFactors,
} from '../actions/queries/getMfaFactors.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetMfaFactorsQueryParameters = GetMfaFactorsParameters

export const getMfaFactorsQueryKey = (
  parameters: Omit<GetMfaFactorsQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('mfaFactors', parameters)
export type GetMfaFactorsQueryKey = ReturnType<typeof getMfaFactorsQueryKey>

/** Query options for `getMfaFactors`; disabled until a session exists. */
export function getMfaFactorsQueryOptions(client: Latchkey, parameters: GetMfaFactorsQueryParameters = {}) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getMfaFactorsQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetMfaFactorsReturnType> =>
      getMfaFactors(client, { ...parameters, sessionId: scope.sessionId ?? undefined, signal }),
    enabled,
  }
}
