import type { OAuth2Provider, OAuthMethod } from '@latchkey/protocol'
import { DEV_OIDC_PREFIX } from './devIdp.ts'
import type { OAuthProviderEndpoints } from './exchangeAuthorizationCode.ts'

/** Origin the service uses to reach its own dev identity provider in-process. */
export const INTERNAL_ORIGIN = 'http://latchkey.internal'

/** The method name (`google`) of an `OAUTH2_PROVIDER_GOOGLE`. */
export const methodOf = (provider: OAuth2Provider) =>
  provider.replace('OAUTH2_PROVIDER_', '').toLowerCase() as OAuthMethod

/** Endpoints of the built-in dev identity provider for a method, reached in-process. */
export function devEndpoints(method: OAuthMethod): OAuthProviderEndpoints {
  const issuer = `${INTERNAL_ORIGIN}${DEV_OIDC_PREFIX}/${method}`
  return { issuer, tokenEndpoint: `${issuer}/token`, jwksUri: `${issuer}/jwks` }
}
