import type { OAuth2Provider, OAuthMethod, ProxySettings } from '@latchkey/protocol'
import { DEV_OIDC_PREFIX } from './devIdp.ts'
import type { OAuthProviderEndpoints } from './exchangeAuthorizationCode.ts'

/** Origin the service uses to reach its own dev identity provider in-process. */
export const INTERNAL_ORIGIN = 'http://latchkey.internal'

/** The method name (`google`) of an `OAUTH2_PROVIDER_GOOGLE`. */
export const methodOf = (provider: OAuth2Provider) =>
  provider.replace('OAUTH2_PROVIDER_', '').toLowerCase() as OAuthMethod

/** Endpoints of a provider: the organization's configured ones, else the built-in dev IdP. */
export function providerEndpoints(
  settings: ProxySettings | undefined,
  provider: OAuth2Provider,
): OAuthProviderEndpoints & { dev: boolean } {
  const method = methodOf(provider)
  const configured = settings?.oauth.providers?.[method]
  if (configured)
    return {
      issuer: configured.issuer,
      tokenEndpoint: configured.tokenEndpoint,
      jwksUri: configured.jwksUri,
      dev: false,
    }
  const issuer = `${INTERNAL_ORIGIN}${DEV_OIDC_PREFIX}/${method}`
  return { issuer, tokenEndpoint: `${issuer}/token`, jwksUri: `${issuer}/jwks`, dev: true }
}
