import {
  type GetWhoamiParameters,
  type GetWhoamiReturnType,
  getWhoami,
} from '../actions/queries/getWhoami.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetWhoamiQueryParameters = GetWhoamiParameters

export const getWhoamiQueryKey = (
  parameters: Omit<GetWhoamiQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('whoami', parameters)
export type GetWhoamiQueryKey = ReturnType<typeof getWhoamiQueryKey>

/** Query options for `getWhoami`; disabled until a session exists. */
export function getWhoamiQueryOptions(client: Latchkey, parameters: GetWhoamiQueryParameters = {}) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getWhoamiQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetWhoamiReturnType> =>
      getWhoami(client, { ...parameters, sessionId: scope.sessionId ?? undefined, signal }),
    enabled: enabled,
  }
}
