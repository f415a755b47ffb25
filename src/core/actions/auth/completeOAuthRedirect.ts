import type { Latchkey } from '../../types.ts'
import { finishOAuth, type OAuthSignInReturnType } from './oauthShared.ts'
import { takePendingOAuth } from './pendingOAuth.ts'

export type CompleteOAuthRedirectParameters = {
  /** @default location.href */
  callbackUrl?: string | undefined
  /** Remove `code` and `state` from the address bar afterwards. @default true */
  cleanUrl?: boolean
}
export type CompleteOAuthRedirectReturnType = OAuthSignInReturnType | undefined

/**
 * Finishes an OAuth sign-in that fell back to a full-page redirect. Resolves `undefined` when
 * no redirect sign-in is pending in this tab. The pending state is single-use.
 */
export async function completeOAuthRedirect(
  client: Latchkey,
  parameters: CompleteOAuthRedirectParameters = {},
): Promise<CompleteOAuthRedirectReturnType> {
  await client.hydrate()
  const pending = takePendingOAuth(client)
  if (!pending) return undefined
  const callbackUrl = parameters.callbackUrl ?? location.href
  try {
    return await finishOAuth(client, pending, callbackUrl)
  } catch (error) {
    await client.keyStore.delete(pending.publicKey).catch(() => undefined)
    throw error
  } finally {
    if (parameters.cleanUrl !== false && typeof history !== 'undefined' && !parameters.callbackUrl) {
      const url = new URL(location.href)
      for (const name of ['code', 'state', 'error', 'error_description', 'scope', 'iss'])
        url.searchParams.delete(name)
      history.replaceState(history.state, '', url)
    }
  }
}
