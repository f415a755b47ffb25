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
  const { devOutboxUrl, ...config } = await proxy(client, 'wallet_kit_config', {}, parameters)
  const outbox = devOutboxUrl === undefined ? undefined : serviceUrl(client, devOutboxUrl)
  return outbox ? { ...config, devOutboxUrl: outbox } : config
}

/**
 * The code step links to `devOutboxUrl`, so an answer the app did not write (an impersonated or
 * compromised service, a network attacker on an http:// service) must not choose where: it is kept
 * only as an http(s) URL on the service the app configured (`baseUrl`'s origin, where the local
 * service serves `/dev/outbox`), never a `javascript:` URL or another site's page.
 */
function serviceUrl(client: Latchkey, value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return undefined
  }
  const ok =
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.origin === new URL(client.config.baseUrl).origin
  return ok ? url.href : undefined
}
