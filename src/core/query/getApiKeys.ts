import {
  type GetApiKeysParameters,
  type GetApiKeysReturnType,
  getApiKeys,
} from '../actions/queries/getApiKeys.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetApiKeysQueryParameters = GetApiKeysParameters

export const getApiKeysQueryKey = (
  parameters: Omit<GetApiKeysQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('apiKeys', parameters)
export type GetApiKeysQueryKey = ReturnType<typeof getApiKeysQueryKey>

/** Query options for `getApiKeys`; disabled until a session exists. */
export function getApiKeysQueryOptions(client: Latchkey, parameters: GetApiKeysQueryParameters = {}) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getApiKeysQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetApiKeysReturnType> =>
      getApiKeys(client, { ...parameters, sessionId: scope.sessionId ?? undefined, signal }),
    enabled: enabled,
  }
}
