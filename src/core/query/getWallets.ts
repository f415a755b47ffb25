import {
  type GetWalletsParameters,
  type GetWalletsReturnType,
  getWallets,
} from '../actions/queries/getWallets.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetWalletsQueryParameters = GetWalletsParameters

export const getWalletsQueryKey = (
  parameters: Omit<GetWalletsQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('wallets', parameters)
export type GetWalletsQueryKey = ReturnType<typeof getWalletsQueryKey>

/** Query options for `getWallets`; disabled until a session exists. */
export function getWalletsQueryOptions(client: Latchkey, parameters: GetWalletsQueryParameters = {}) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getWalletsQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetWalletsReturnType> =>
      getWallets(client, { ...parameters, sessionId: scope.sessionId ?? undefined, signal }),
    enabled: enabled,
  }
}
