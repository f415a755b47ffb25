import type { Latchkey } from '../../types.ts'
import { type GetWalletKitConfigReturnType, getWalletKitConfig } from '../proxy/getWalletKitConfig.ts'

/** `wallet_kit_config`, fetched once per client (a failure is not cached). */
export function loadWalletKitConfig(client: Latchkey): Promise<GetWalletKitConfigReturnType> {
  const cached = client.tasks.get('walletKitConfig') as Promise<GetWalletKitConfigReturnType> | undefined
  return cached ?? refreshWalletKitConfig(client)
}

/**
 * Fetches `wallet_kit_config` anew and makes it the client's cached copy, so a query that shows
 * the config and the sign-in flows that read it share one request.
 */
export function refreshWalletKitConfig(
  client: Latchkey,
  parameters: { signal?: AbortSignal | undefined } = {},
): Promise<GetWalletKitConfigReturnType> {
  const task = getWalletKitConfig(client, parameters)
  client.tasks.set('walletKitConfig', task)
  task.catch(() => {
    if (client.tasks.get('walletKitConfig') === task) client.tasks.delete('walletKitConfig')
  })
  return task
}

/** Session lifetime in seconds: the app's choice, else the operator's, else 15 minutes. */
export async function sessionLifetimeSeconds(client: Latchkey): Promise<number> {
  if (client.config.session.expirationSeconds) return client.config.session.expirationSeconds
  const fromService = Number(
    (await loadWalletKitConfig(client).catch(() => undefined))?.sessionExpirationSeconds,
  )
  return Number.isFinite(fromService) && fromService > 0 ? fromService : 900
}
