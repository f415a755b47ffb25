import type { ProxyResponse } from '@latchkey/protocol'
import { proxy } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'

export type GetWalletKitConfigParameters = { signal?: AbortSignal | undefined }
export type GetWalletKitConfigReturnType = ProxyResponse<'wallet_kit_config'>

/** Auth proxy `/v1/wallet_kit_config`: the enabled sign-in methods and session lifetime. */
export async function getWalletKitConfig(
  client: Latchkey,
  parameters: GetWalletKitConfigParameters = {},
): Promise<GetWalletKitConfigReturnType> {
  const config = await proxy(client, 'wallet_kit_config', {}, parameters)
  // The code step links to `devOutboxUrl`, so an answer the app did not write (an impersonated or
  // compromised service, a network attacker on an http:// service) must not choose where: it is
  // kept only on the service the app configured (`baseUrl`'s origin, where the local service
  // serves `/dev/outbox`), never a `javascript:` or `data:` URL (origin "null") or another site.
  // A prefix of the origin and a slash: what follows is the path, whatever it holds.
  if (!config.devOutboxUrl?.startsWith(`${new URL(client.config.baseUrl).origin}/`))
    delete config.devOutboxUrl
  return config
}
