import {
  type GetSpendingLimitsParameters,
  type GetSpendingLimitsReturnType,
  getSpendingLimits,
} from '../actions/queries/getSpendingLimits.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetSpendingLimitsQueryParameters = GetSpendingLimitsParameters

export const getSpendingLimitsQueryKey = (
  parameters: Omit<GetSpendingLimitsQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('spendingLimits', parameters)
export type GetSpendingLimitsQueryKey = ReturnType<typeof getSpendingLimitsQueryKey>

/** Query options for `getSpendingLimits`; disabled until a session exists. */
export function getSpendingLimitsQueryOptions(
  client: Latchkey,
  parameters: GetSpendingLimitsQueryParameters = {},
) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getSpendingLimitsQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetSpendingLimitsReturnType> =>
      getSpendingLimits(client, { ...parameters, sessionId: scope.sessionId ?? undefined, signal }),
    enabled,
  }
}
