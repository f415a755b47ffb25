import { refreshWalletKitConfig } from '../actions/auth/loadWalletKitConfig.ts'
import type { GetWalletKitConfigReturnType } from '../actions/proxy/getWalletKitConfig.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf } from './utils.ts'

export const getWalletKitConfigQueryKey = (parameters: { authProxyConfigId: string }) =>
  queryKeyOf('walletKitConfig', parameters)

/** Query options for the proxy's `wallet_kit_config` (no session needed; rarely changes). */
export function getWalletKitConfigQueryOptions(client: Latchkey) {
  return {
    queryKey: getWalletKitConfigQueryKey({ authProxyConfigId: client.config.authProxyConfigId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetWalletKitConfigReturnType> =>
      refreshWalletKitConfig(client, { signal }),
    staleTime: 5 * 60_000,
  }
}
