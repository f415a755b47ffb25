import { OAUTH2_PROVIDERS, type OAuth2AuthenticateParameters, type OAuth2Provider } from '@latchkey/protocol'
import type { JWTPayload } from 'jose'
import { ApiError, CredentialError, FieldError } from '../../kernel/base/errors.ts'
import {
  createProviderDocuments,
  type ProviderDocuments,
  type ProviderFetch,
} from './createProviderDocuments.ts'
import { emailVerifiedClaim, type ServiceOidc, type ServiceOidcClaims } from './createServiceOidc.ts'
import { CODE_VERIFIER } from './pkce.ts'

/** Endpoints of one OAuth provider (OpenID Connect). */
export interface OAuthProviderEndpoints {
  /** Expected `iss` of its ID tokens. */
  issuer: string
  tokenEndpoint: string
  jwksUri: string
  /**
   * The service's confidential client at this provider: the request must name its client id and
   * one of its redirect URIs, and the exchange authenticates with its secret.
   */
  client?: ConfidentialClient
}

/** A client registered at the provider with a secret (the operator's configuration). */
export interface ConfidentialClient {
  clientId: string
  redirectUris: readonly string[]
  authMethod: 'client_secret_basic' | 'client_secret_post'
  /** The current secret (Apple's is a JWT signed on demand). */
  secret: () => Promise<string>
}

export interface ExchangeContext {
  /** Reaches the provider; the service passes one that serves its own dev IdP in-process. */
  fetch: ProviderFetch
  endpointsFor: (provider: OAuth2Provider) => OAuthProviderEndpoints | Promise<OAuthProviderEndpoints>
  serviceOidc: ServiceOidc
  /**
   * The top-level organization whose settings named the provider (`topLevelOf`): the
   * token's `org`, where alone it is accepted.
   */
  organizationId: string
  /** Where key sets are read and kept. @default read once per exchange through `fetch` */
  documents?: ProviderDocuments
  /** Epoch milliseconds. @default Date.now */
  now?: () => number
  /** Longest wait for each provider call (the activity holds the store meanwhile). @default 10000 */
  timeoutMs?: number
}

export type OAuth2AuthenticateParams = OAuth2AuthenticateParameters

const requiredString = (params: Record<string, unknown>, field: string): string => {
  const value = params[field]
  if (typeof value !== 'string' || value === '')
    throw new FieldError({
      code: 'FIELD_REQUIRED',
      field,
      reason: 'is required and must be a non-empty string',
    })
  return value
}

/** Checks the shape of `oauth2_authenticate` parameters. */
export function readOAuth2AuthenticateParams(params: Record<string, unknown>): OAuth2AuthenticateParams {
  const provider = requiredString(params, 'provider')
  if (!OAUTH2_PROVIDERS.includes(provider as OAuth2Provider))
    throw new FieldError({
      code: 'ENUM_INVALID',
      field: 'provider',
      reason: `must be one of ${OAUTH2_PROVIDERS.join(', ')}`,
    })
  const codeVerifier = requiredString(params, 'codeVerifier')
  if (!CODE_VERIFIER.test(codeVerifier))
    throw new CredentialError({
      code: 'PKCE_INVALID',
      field: 'codeVerifier',
      reason: 'must be 43 to 128 unreserved characters (RFC 7636)',
    })
  const nonce = requiredString(params, 'nonce')
  if (!/^[0-9a-f]{64}$/.test(nonce))
    throw new FieldError({ field: 'nonce', reason: 'must be the lowercase hex SHA-256 of the public key' })
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
  const documents =
    ctx.documents ??
    createProviderDocuments({ fetch: ctx.fetch, now, timeoutMs, cacheMs: 0, jwksRefetchFloorMs: 0 })
  const endpoints = await ctx.endpointsFor(params.provider)
  const client = endpoints.client
  // Checked before the provider is called: the secret is never sent on behalf of another client.
  if (client && params.clientId !== client.clientId)
    throw new CredentialError({
      code: 'OAUTH_EXCHANGE_FAILED',
      field: 'clientId',
      reason: "is not this service's client at the provider",
    })
  if (client && !client.redirectUris.includes(params.redirectUri))
    throw new CredentialError({
      code: 'OAUTH_EXCHANGE_FAILED',
      field: 'redirectUri',
      reason: 'is not one of the redirect URIs configured for this provider',
    })
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: params.authCode,
    redirect_uri: params.redirectUri,
    client_id: params.clientId,
    code_verifier: params.codeVerifier,
  })
  const headers: Record<string, string> = {
    'Content-Type': 'application/x-www-form-urlencoded',
    Accept: 'application/json',
  }
  if (client) {
    const secret = await client.secret()
    if (client.authMethod === 'client_secret_post') form.set('client_secret', secret)
    else {
      // RFC 6749 §2.3.1: both parts form-urlencoded before Basic encoding.
      const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+')
      headers.Authorization = `Basic ${btoa(`${encode(client.clientId)}:${encode(secret)}`)}`
    }
  }
  let response: Response
  try {
    response = await ctx.fetch(endpoints.tokenEndpoint, {
      method: 'POST',
      headers,
      body: form.toString(),
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (error) {
    throw new CredentialError({
      code: 'OAUTH_EXCHANGE_FAILED',
      message: `the provider's token endpoint is unreachable: ${(error as Error).message}`,
    })
  }
  const body = await readJson(response)
  if (!response.ok) {
    const description = [body.error, body.error_description].filter((x) => typeof x === 'string').join(': ')
    // Providers report a wrong verifier as invalid_grant; name it so the client can tell.
    const pkce = /verifier|pkce|challenge/i.test(String(body.error_description ?? ''))
    throw new CredentialError({
      code: pkce ? 'PKCE_INVALID' : 'OAUTH_EXCHANGE_FAILED',
      field: pkce ? 'codeVerifier' : 'authCode',
      message: `the provider refused the authorization code${description ? ` (${description})` : ''}`,
      extra: { providerError: typeof body.error === 'string' ? body.error : `HTTP ${response.status}` },
    })
  }
  if (typeof body.id_token !== 'string')
    throw new CredentialError({
      code: 'OAUTH_EXCHANGE_FAILED',
      message: 'the provider answered without an id_token (is the openid scope requested?)',
    })

  let idClaims: JWTPayload
  try {
    idClaims = await documents.verify(body.id_token, endpoints.jwksUri, {
      issuer: endpoints.issuer,
      audience: params.clientId,
      algorithms: ['ES256', 'RS256', 'EdDSA', 'ES384', 'PS256'],
      currentDate: new Date(now()),
      requiredClaims: ['sub', 'exp'],
    })
  } catch (error) {
    if (error instanceof ApiError) throw error
    throw new CredentialError({
      code: 'OIDC_TOKEN_INVALID',
      field: 'authCode',
      message: `the provider's ID token is not valid: ${(error as Error).message}`,
    })
  }
  // OpenID Connect Core §3.1.3.7: a token for several audiences must name this client as its party.
  if (Array.isArray(idClaims.aud) && idClaims.aud.length > 1 && idClaims.azp !== params.clientId)
    throw new CredentialError({
      code: 'OIDC_TOKEN_INVALID',
      field: 'authCode',
      message: "the provider's ID token was issued to another party (azp)",
    })
  if (idClaims.nonce !== params.nonce)
    throw new CredentialError({
      code: 'NONCE_MISMATCH',
      field: 'nonce',
      message: "the ID token's nonce does not match the request's nonce",
    })

  const emailVerified = emailVerifiedClaim(idClaims.email_verified)
  const { token, claims } = ctx.serviceOidc.issue({
    sub: idClaims.sub!,
    aud: params.clientId,
    nonce: params.nonce,
    provider: params.provider,
    idp_iss: idClaims.iss!,
    org: ctx.organizationId,
    ...(typeof idClaims.email === 'string' ? { email: idClaims.email.toLowerCase() } : {}),
    // As the provider said it (a string "false" is not verified), absent when it said nothing.
    ...(emailVerified !== undefined ? { email_verified: emailVerified } : {}),
    ...(typeof idClaims.name === 'string' ? { name: idClaims.name } : {}),
  })
  return { oidcToken: token, claims }
}
