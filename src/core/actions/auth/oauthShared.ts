import { decodeJwtClaims, type OAuthMethod, oauthProviderOf } from '@latchkey/protocol'
import {
  ConfigInvalidError,
  LatchkeyError,
  OAuthStateMismatchError,
  UserCancelledError,
} from '../../errors.ts'
import { addSessionFromJwt } from '../../session/sessions.ts'
import type { Session } from '../../session/types.ts'
import type { Latchkey } from '../../types.ts'
import { randomBytes, sha256Hex, toBase64Url, utf8ToBytes } from '../../utils/encoding.ts'
import { getAccount } from '../proxy/getAccount.ts'
import { proxyOAuth2Authenticate } from '../proxy/proxyOAuth2Authenticate.ts'
import { proxyOAuthLogin } from '../proxy/proxyOAuthLogin.ts'
import { proxySignup } from '../proxy/proxySignup.ts'
import { loadWalletKitConfig, sessionLifetimeSeconds } from './loadWalletKitConfig.ts'

/** What must survive between starting an authorization request and reading its redirect. */
export interface PendingOAuth {
  provider: OAuthMethod
  state: string
  codeVerifier: string
  nonce: string
  redirectUri: string
  clientId: string
  /** Session key the nonce commits to (its private half waits in the key store). */
  publicKey: string
  userName?: string | undefined
  createdAt: number
}

export interface OAuthSignInReturnType {
  session: Session
  created: boolean
}

const b64urlSha256 = async (text: string) =>
  toBase64Url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', utf8ToBytes(text) as Uint8Array<ArrayBuffer>)),
  )

/** Builds the authorization request: PKCE S256, random `state`, nonce = sha256 hex of the key. */
export async function prepareOAuth(
  client: Latchkey,
  parameters: {
    provider: OAuthMethod
    publicKey: string
    redirectUri?: string | undefined
    userName?: string | undefined
  },
): Promise<{ url: string; pending: PendingOAuth }> {
  const kit = await loadWalletKitConfig(client)
  const clientId = kit.oauthClientIds?.[parameters.provider]
  if (!clientId)
    throw new ConfigInvalidError(
      `No OAuth client id is configured for ${parameters.provider}`,
      'oauthClientIds',
    )
  const redirectUri =
    parameters.redirectUri ||
    client.config.oauth?.redirectUri ||
    kit.oauthRedirectUrl ||
    (typeof location === 'undefined' ? undefined : `${location.origin}${location.pathname}`)
  if (!redirectUri) throw new ConfigInvalidError('No OAuth redirect URI is configured', 'oauth.redirectUri')
  const pending: PendingOAuth = {
    provider: parameters.provider,
    state: toBase64Url(randomBytes(24)),
    codeVerifier: toBase64Url(randomBytes(32)),
    nonce: await sha256Hex(parameters.publicKey),
    redirectUri,
    clientId,
    publicKey: parameters.publicKey,
    userName: parameters.userName,
    createdAt: Date.now(),
  }
  const endpoint =
    client.config.oauth?.authorizationEndpoints?.[parameters.provider] ??
    `${client.config.baseUrl}/dev/oidc/${parameters.provider}/authorize`
  const url = new URL(endpoint)
  const query = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await b64urlSha256(pending.codeVerifier),
    code_challenge_method: 'S256',
  }
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value)
  return { url: url.toString(), pending }
}

/**
 * Strictly checks the redirect: same origin and path as the registered redirect URI, the exact
 * `state` we sent, and a code. Returns the authorization code.
 */
export function readAuthorizationResponse(callbackUrl: string, pending: PendingOAuth): string {
  let url: URL
  let expected: URL
  try {
    url = new URL(callbackUrl)
    expected = new URL(pending.redirectUri)
  } catch {
    throw new OAuthStateMismatchError('the redirect is not a URL')
  }
  if (url.origin !== expected.origin || url.pathname !== expected.pathname)
    throw new OAuthStateMismatchError('the redirect does not go to the registered redirect URI')
  const params = url.searchParams
  if (params.get('state') !== pending.state) throw new OAuthStateMismatchError('state does not match')
  const error = params.get('error')
  if (error === 'access_denied') throw new UserCancelledError('Sign-in was cancelled at the provider')
  if (error)
    throw new LatchkeyError(`The provider refused: ${params.get('error_description') ?? error}`, {
      code: 'OAUTH_EXCHANGE_FAILED',
      details: { error },
    })
  const code = params.get('code')
  if (!code) throw new OAuthStateMismatchError('the redirect carries no code')
  return code
}

/**
 * Reads the provider's redirect (see `readAuthorizationResponse`) and has the auth proxy exchange
 * its code (with the PKCE verifier and the nonce) for the service's OIDC token. Sign-in and linking
 * a login both end their authorization here.
 */
export async function exchangeAuthorizationCode(
  client: Latchkey,
  pending: PendingOAuth,
  callbackUrl: string,
  signal?: AbortSignal,
): Promise<{ oidcToken: string; providerName: string }> {
  const authCode = readAuthorizationResponse(callbackUrl, pending)
  const providerName = oauthProviderOf(pending.provider)
  const { oidcToken } = await proxyOAuth2Authenticate(
    client,
    {
      provider: providerName,
      authCode,
      redirectUri: pending.redirectUri,
      codeVerifier: pending.codeVerifier,
      nonce: pending.nonce,
      clientId: pending.clientId,
    },
    { signal },
  )
  return { oidcToken, providerName }
}

/** Exchanges the code, signs up when there is no account, and logs in with the waiting key. */
export async function finishOAuth(
  client: Latchkey,
  pending: PendingOAuth,
  callbackUrl: string,
  signal?: AbortSignal,
): Promise<OAuthSignInReturnType> {
  const { oidcToken, providerName } = await exchangeAuthorizationCode(client, pending, callbackUrl, signal)
  let claims: { email?: string; name?: string } = {}
  try {
    claims = decodeJwtClaims(oidcToken)
  } catch {
    // The label is cosmetic; the service verified the token.
  }
  let { organizationId } = await getAccount(
    client,
    { filterType: 'OIDC_TOKEN', filterValue: oidcToken },
    { signal },
  )
  const created = !organizationId
  if (!organizationId) {
    const signup = await proxySignup(
      client,
      {
        userName: pending.userName ?? claims.name ?? claims.email ?? `${pending.provider} user`,
        ...(claims.email ? { userEmail: claims.email } : {}),
        apiKeys: [],
        authenticators: [],
        oauthProviders: [{ providerName, oidcToken }],
      },
      { signal },
    )
    organizationId = signup.organizationId
  }
  const { session } = await proxyOAuthLogin(
    client,
    {
      oidcToken,
      publicKey: pending.publicKey,
      expirationSeconds: String(await sessionLifetimeSeconds(client)),
      organizationId,
    },
    { signal },
  )
  return {
    session: addSessionFromJwt(client, { session, method: 'oauth', label: claims.email ?? pending.provider }),
    created,
  }
}
