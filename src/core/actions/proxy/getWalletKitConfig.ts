import type { ProxyResponse } from '@latchkey/protocol'
import { proxy } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'

export type GetWalletKitConfigParameters = { signal?: AbortSignal | undefined }
export type GetWalletKitConfigReturnType = ProxyResponse<'wallet_kit_config'>

/** Auth proxy `/v1/wallet_kit_config`: the enabled sign-in methods and session lifetime. */
export function getWalletKitConfig(
  client: Latchkey,
  parameters: GetWalletKitConfigParameters = {},
): Promise<GetWalletKitConfigReturnType> {
  return proxy(client, 'wallet_kit_config', {}, parameters)
}
