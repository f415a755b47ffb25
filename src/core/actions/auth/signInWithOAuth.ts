import type { OAuthMethod } from '@latchkey/protocol'
import type { Latchkey, OpenAuthorizationWindow } from '../../types.ts'
import { finishOAuth, type OAuthSignInReturnType, prepareOAuth } from './oauthShared.ts'
import { openAuthorization } from './openOAuthPopup.ts'
import { savePendingOAuth } from './pendingOAuth.ts'
import { withSessionKey } from './withSessionKey.ts'

export type SignInWithOAuthParameters = {
  /** `google`, `apple`, `facebook`, `x` or `discord`. */
  provider: OAuthMethod
  /** @default config.oauth.redirectUri, else wallet_kit_config's oauthRedirectUrl */
  redirectUri?: string | undefined
  /** Name of the user created when there is no account yet. @default the token's name or e-mail */
  userName?: string | undefined
  /** @default config.oauth.openAuthorizationWindow, else a popup with a redirect fallback */
  openAuthorizationWindow?: OpenAuthorizationWindow | undefined
  /**
   * With the default window: what to do when the popup is blocked. `'redirect'` navigates the page
   * to the provider (finish with `completeOAuthRedirect` on return); `'error'` throws.
   * @default 'redirect'
   */
  onPopupBlocked?: 'redirect' | 'error'
  signal?: AbortSignal | undefined
}
export type SignInWithOAuthReturnType = OAuthSignInReturnType

/**
 * OAuth / OIDC sign-in: authorization-code flow with PKCE S256, `state`, and a nonce binding the
 * ID token to a new non-extractable session key; login or sign-up decided by the `account` lookup.
 */
export async function signInWithOAuth(
  client: Latchkey,
  parameters: SignInWithOAuthParameters,
): Promise<SignInWithOAuthReturnType> {
  return withSessionKey(client, async (key) => {
    const { url, pending } = await prepareOAuth(client, { ...parameters, publicKey: key.publicKey })
    const callbackUrl = await openAuthorization({
      url,
      redirectUri: pending.redirectUri,
      open: parameters.openAuthorizationWindow ?? client.config.oauth?.openAuthorizationWindow,
      signal: parameters.signal,
      whenBlocked:
        parameters.onPopupBlocked === 'error'
          ? undefined
          : () => {
              savePendingOAuth(client, pending)
              window.location.assign(url)
              // The page is leaving; this promise never settles (the key must survive the redirect).
              return new Promise<never>(() => undefined)
            },
    })
    return finishOAuth(client, pending, callbackUrl, parameters.signal)
  })
}
