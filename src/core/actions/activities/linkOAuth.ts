import { decodeJwtClaims, namesOAuthIdentity, type OAuthMethod, oauthIdentityOf } from '@latchkey/protocol'
import { LatchkeyError, thenOrResume } from '../../errors.ts'
import { requireSession } from '../../session/sessions.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey, OpenAuthorizationWindow } from '../../types.ts'
import { exchangeAuthorizationCode, prepareOAuth } from '../auth/oauthShared.ts'
import { openAuthorization } from '../auth/openOAuthPopup.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import { getUser } from '../queries/getUser.ts'

export type LinkOAuthParameters = {
  /** `google`, `apple`, `facebook`, `x` or `discord` (one `wallet_kit_config` enables). */
  provider: OAuthMethod
  /** @default config.oauth.redirectUri, else wallet_kit_config's oauthRedirectUrl */
  redirectUri?: string | undefined
  /**
   * @default config.oauth.openAuthorizationWindow, else a popup. A blocked popup throws
   * `PopupBlockedError` (linking has no full-page redirect: the page would lose what it shows); try
   * again from a click with `reserveOAuthPopup()` here, a popup opened during the click.
   */
  openAuthorizationWindow?: OpenAuthorizationWindow | undefined
  /** @default the session's user */
  userId?: string | undefined
} & ActionOptions
export type LinkOAuthReturnType = {
  userId: string
  /** The new identity's `providerId` (what `getLinkedLogins` lists and `unlinkLogin` takes). */
  providerIds: string[]
}

/**
 * Links an OAuth / OIDC identity to the signed-in account: the provider's authorization-code flow
 * (PKCE S256, `state`) in a popup, with the ID token's nonce bound to the session key, exchanged
 * by the auth proxy for the service's OIDC token, then `create_oauth_providers` stamped by the
 * session. Signing in with that provider then reaches this account.
 *
 * An identity another account of the app holds is refused (409 `ALREADY_EXISTS`); one this user
 * already has changes nothing and answers its `providerIds`. A closed window or a "cancel" at the
 * provider is `UserCancelledError` and changes nothing; an MFA policy on the user makes it throw
 * `MfaRequiredError` (`completeMfa` answers `{ userId, providerIds }`).
 */
export async function linkOAuth(
  client: Latchkey,
  parameters: LinkOAuthParameters,
): Promise<LinkOAuthReturnType> {
  const [{ provider, redirectUri, openAuthorizationWindow, userId: given }, options] =
    splitOptions(parameters)
  await client.hydrate()
  const session = requireSession(client, options.sessionId)
  if (!session.publicKey) throw new TypeError('A read-only session cannot link a login')
  const userId = given ?? session.userId
  const { url, pending } = await prepareOAuth(client, {
    provider,
    publicKey: session.publicKey,
    redirectUri,
  })
  const callbackUrl = await openAuthorization({
    url,
    redirectUri: pending.redirectUri,
    open: openAuthorizationWindow ?? client.config.oauth?.openAuthorizationWindow,
    signal: options.signal,
  })
  const { oidcToken, providerName } = await exchangeAuthorizationCode(
    client,
    pending,
    callbackUrl,
    options.signal,
  )
  try {
    return await thenOrResume(
      submit(
        client,
        'create_oauth_providers',
        { userId, oauthProviders: [{ providerName, oidcToken }] },
        options,
      ),
      ({ result }) => ({ userId, providerIds: result.providerIds }),
    )
  } catch (error) {
    // Linking what this user already has changes nothing: answer its providerIds.
    const held =
      error instanceof LatchkeyError && error.code === 'ALREADY_EXISTS'
        ? await heldBy(client, userId, oidcToken)
        : []
    if (held.length > 0) return { userId, providerIds: held }
    throw error
  }
}

/** The user's providers with the identity the token names (none: the refusal is a real conflict). */
async function heldBy(client: Latchkey, userId: string, oidcToken: string): Promise<string[]> {
  try {
    // The provider's issuer and subject (idp_iss in the service's token), as the service records them.
    const identity = oauthIdentityOf(decodeJwtClaims(oidcToken))
    if (!identity) return []
    const { user } = await getUser(client, { userId })
    return user.oauthProviders.filter((row) => namesOAuthIdentity(row, identity)).map((row) => row.providerId)
  } catch {
    return []
  }
}
