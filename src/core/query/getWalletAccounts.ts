import {
  type GetWalletAccountsParameters,
  type GetWalletAccountsReturnType,
  getWalletAccounts,
} from '../actions/queries/getWalletAccounts.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetWalletAccountsQueryParameters = GetWalletAccountsParameters

export const getWalletAccountsQueryKey = (
  parameters: Omit<GetWalletAccountsQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('walletAccounts', parameters)
export type GetWalletAccountsQueryKey = ReturnType<typeof getWalletAccountsQueryKey>

/** Query options for `getWalletAccounts`; disabled until a session exists. */
export function getWalletAccountsQueryOptions(
  client: Latchkey,
  parameters: GetWalletAccountsQueryParameters = {},
) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getWalletAccountsQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetWalletAccountsReturnType> =>
      getWalletAccounts(client, { ...parameters, sessionId: scope.sessionId ?? undefined, signal }),
    enabled: enabled,
  }
}
