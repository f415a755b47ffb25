import { OAUTH2_PROVIDERS, type OAuth2AuthenticateParameters, type OAuth2Provider } from '@latchkey/protocol'
import { createLocalJWKSet, type JSONWebKeySet, type JWTPayload, jwtVerify } from 'jose'
import { ApiError } from '../../errors.ts'
import type { ServiceOidc, ServiceOidcClaims } from './createServiceOidc.ts'
import { CODE_VERIFIER } from './pkce.ts'

/** Endpoints of one OAuth provider (OpenID Connect). */
export interface OAuthProviderEndpoints {
  /** Expected `iss` of its ID tokens. */
  issuer: string
  tokenEndpoint: string
  jwksUri: string
  /** Confidential clients only; sent as `client_secret` (client_secret_post). */
  clientSecret?: string
}

export interface ExchangeContext {
  /** Reaches the provider; the service passes one that serves its own dev IdP in-process. */
  fetch: (url: string, init: RequestInit) => Promise<Response> | Response
  endpointsFor: (provider: OAuth2Provider) => OAuthProviderEndpoints
  serviceOidc: ServiceOidc
  /** Epoch milliseconds. @default Date.now */
  now?: () => number
  /** Longest wait for each provider call (the activity holds the store meanwhile). @default 10000 */
  timeoutMs?: number
}

export type OAuth2AuthenticateParams = OAuth2AuthenticateParameters

const requiredString = (params: Record<string, unknown>, field: string): string => {
  const value = params[field]
  if (typeof value !== 'string' || value === '')
    throw new ApiError('FIELD_REQUIRED', `${field} is required and must be a non-empty string`, field)
  return value
}

/** Checks the shape of `oauth2_authenticate` parameters. */
export function readOAuth2AuthenticateParams(params: Record<string, unknown>): OAuth2AuthenticateParams {
  const provider = requiredString(params, 'provider')
  if (!OAUTH2_PROVIDERS.includes(provider as OAuth2Provider))
    throw new ApiError('ENUM_INVALID', `provider must be one of ${OAUTH2_PROVIDERS.join(', ')}`, 'provider')
  const codeVerifier = requiredString(params, 'codeVerifier')
  if (!CODE_VERIFIER.test(codeVerifier))
    throw new ApiError(
      'PKCE_INVALID',
      'codeVerifier must be 43 to 128 unreserved characters (RFC 7636)',
      'codeVerifier',
    )
  const nonce = requiredString(params, 'nonce')
  if (!/^[0-9a-f]{64}$/.test(nonce))
    throw new ApiError('FIELD_INVALID', 'nonce must be the lowercase hex SHA-256 of the public key', 'nonce')
  return {
    provider: provider as OAuth2Provider,
    authCode: requiredString(params, 'authCode'),
    redirectUri: requiredString(params, 'redirectUri'),
    codeVerifier,
    nonce,
    clientId: requiredString(params, 'clientId'),
  }
}

async function readJson(response: Response): Promise<Record<string, unknown>> {
  try {
    const value = await response.json()
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/**
 * `oauth2_authenticate`: a real authorization-code + PKCE exchange at the provider's token
 * endpoint, verification of its ID token (signature by its JWKS, `iss`, `aud` = client id,
 * `exp`, and `nonce` equal to the request's), then the service's own OIDC token for it.
 */
export async function exchangeAuthorizationCode(
  params: OAuth2AuthenticateParams,
  ctx: ExchangeContext,
): Promise<{ oidcToken: string; claims: ServiceOidcClaims }> {
  const now = ctx.now ?? Date.now
  const timeoutMs = ctx.timeoutMs ?? 10_000
  const endpoints = ctx.endpointsFor(params.provider)
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: params.authCode,
    redirect_uri: params.redirectUri,
    client_id: params.clientId,
    code_verifier: params.codeVerifier,
  })
  if (endpoints.clientSecret) form.set('client_secret', endpoints.clientSecret)
  let response: Response
  try {
    response = await ctx.fetch(endpoints.tokenEndpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: form.toString(),
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (error) {
    throw new ApiError(
      'OAUTH_EXCHANGE_FAILED',
      `the provider's token endpoint is unreachable: ${(error as Error).message}`,
    )
  }
  const body = await readJson(response)
  if (!response.ok) {
    const description = [body.error, body.error_description].filter((x) => typeof x === 'string').join(': ')
    // Providers report a wrong verifier as invalid_grant; name it so the client can tell.
    const pkce = /verifier|pkce|challenge/i.test(String(body.error_description ?? ''))
    throw new ApiError(
      pkce ? 'PKCE_INVALID' : 'OAUTH_EXCHANGE_FAILED',
      `the provider refused the authorization code${description ? ` (${description})` : ''}`,
      pkce ? 'codeVerifier' : 'authCode',
      { providerError: typeof body.error === 'string' ? body.error : `HTTP ${response.status}` },
    )
  }
  if (typeof body.id_token !== 'string')
    throw new ApiError(
      'OAUTH_EXCHANGE_FAILED',
      'the provider answered without an id_token (is the openid scope requested?)',
    )

  let jwks: JSONWebKeySet
  try {
    const jwksResponse = await ctx.fetch(endpoints.jwksUri, {
      method: 'GET',
      headers: { Accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    })
    jwks = (await jwksResponse.json()) as JSONWebKeySet
    if (!jwksResponse.ok || !Array.isArray(jwks.keys)) throw new Error(`HTTP ${jwksResponse.status}`)
  } catch (error) {
    throw new ApiError(
      'OAUTH_EXCHANGE_FAILED',
      `could not read the provider's JWKS: ${(error as Error).message}`,
    )
  }
  let idClaims: JWTPayload
  try {
    const verified = await jwtVerify(body.id_token, createLocalJWKSet(jwks), {
      issuer: endpoints.issuer,
      audience: params.clientId,
      algorithms: ['ES256', 'RS256', 'EdDSA', 'ES384', 'PS256'],
      currentDate: new Date(now()),
      requiredClaims: ['sub', 'exp'],
    })
    idClaims = verified.payload
  } catch (error) {
    throw new ApiError(
      'OIDC_TOKEN_INVALID',
      `the provider's ID token is not valid: ${(error as Error).message}`,
      'authCode',
    )
  }
  if (idClaims.nonce !== params.nonce)
    throw new ApiError('NONCE_MISMATCH', "the ID token's nonce does not match the request's nonce", 'nonce')

  const { token, claims } = ctx.serviceOidc.issue({
    sub: idClaims.sub!,
    aud: params.clientId,
    nonce: params.nonce,
    provider: params.provider,
    idp_iss: idClaims.iss!,
    ...(typeof idClaims.email === 'string' ? { email: idClaims.email.toLowerCase() } : {}),
    ...(typeof idClaims.email_verified === 'boolean' ? { email_verified: idClaims.email_verified } : {}),
    ...(typeof idClaims.name === 'string' ? { name: idClaims.name } : {}),
  })
  return { oidcToken: token, claims }
}
