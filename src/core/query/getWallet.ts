import {
  type GetWalletParameters,
  type GetWalletReturnType,
  getWallet,
} from '../actions/queries/getWallet.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetWalletQueryParameters = Partial<GetWalletParameters>

export const getWalletQueryKey = (
  parameters: Omit<GetWalletQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('wallet', parameters)
export type GetWalletQueryKey = ReturnType<typeof getWalletQueryKey>

/** Query options for `getWallet`; disabled until a session and walletId exist. */
export function getWalletQueryOptions(client: Latchkey, parameters: GetWalletQueryParameters) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getWalletQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetWalletReturnType> =>
      getWallet(client, {
        ...parameters,
        sessionId: scope.sessionId ?? undefined,
        signal,
      } as GetWalletParameters),
    enabled: enabled && parameters.walletId !== undefined,
  }
}
