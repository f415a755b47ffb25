import { OAUTH_METHODS, type OAuthMethod, type ProxySettings } from '@latchkey/protocol'
import { NotFoundError, ServiceError } from '../../kernel/base/errors.ts'
import { appleClientSecret } from './appleClientSecret.ts'
import { createProviderDocuments, type ProviderFetch } from './createProviderDocuments.ts'
import type { ConfidentialClient, OAuthProviderEndpoints } from './exchangeAuthorizationCode.ts'
import { type OAuthOptions, type OAuthProviderConfig, WELL_KNOWN_ISSUERS } from './OAuthProviderConfig.ts'
import { devEndpoints, INTERNAL_ORIGIN } from './providerEndpoints.ts'

export interface OAuthProvidersOptions {
  oauth?: OAuthOptions
  /** Reaches real providers. */
  fetch: ProviderFetch
  /** Serves the dev identity provider in-process (URLs under `INTERNAL_ORIGIN`). */
  devFetch: ProviderFetch
  /** Epoch milliseconds. */
  now: () => number
}

/** A provider as one exchange uses it; `dev` when it is the built-in dev identity provider. */
export type ResolvedProvider = OAuthProviderEndpoints & { authorizationEndpoint?: string; dev: boolean }

/** A configuration the service cannot start with (names the option). */
export class OAuthConfigError extends ServiceError {
  override name = 'OAuthConfigError'
}

function checkProvider(method: OAuthMethod, config: OAuthProviderConfig): string {
  const where = `oauth.providers.${method}`
  if (!OAUTH_METHODS.includes(method))
    throw new OAuthConfigError(`${where}: unknown sign-in method (one of ${OAUTH_METHODS.join(', ')})`)
  if (!config.clientId) throw new OAuthConfigError(`${where}.clientId is required`)
  if (method === 'apple' ? !config.appleKey && !config.clientSecret : !config.clientSecret)
    throw new OAuthConfigError(
      `${where}.${method === 'apple' ? 'appleKey (or clientSecret)' : 'clientSecret'} is required`,
    )
  if (config.appleKey && method !== 'apple') throw new OAuthConfigError(`${where}.appleKey is for apple only`)
  if (!config.redirectUris?.length) throw new OAuthConfigError(`${where}.redirectUris needs at least one URI`)
  const issuer = config.issuer ?? WELL_KNOWN_ISSUERS[method]
  if (!issuer) throw new OAuthConfigError(`${where}.issuer is required (${method} has no well-known issuer)`)
  return issuer
}

/**
 * The OAuth providers of one service: the operator's confidential clients (`oauth.providers`,
 * endpoints from OIDC discovery unless given), an organization's own endpoints from its proxy
 * settings, and the dev identity provider for methods with neither when it is on. Discovery and
 * key sets are read through one cache (`documents`).
 */
export function createOAuthProviders(options: OAuthProvidersOptions) {
  const configured = options.oauth?.providers ?? {}
  const issuers = new Map<OAuthMethod, string>()
  const clients = new Map<OAuthMethod, Omit<ConfidentialClient, 'authMethod'>>()
  for (const [method, config] of Object.entries(configured) as [OAuthMethod, OAuthProviderConfig][]) {
    issuers.set(method, checkProvider(method, config))
    const secret = config.appleKey
      ? appleClientSecret(config.appleKey, config.clientId, options.now)
      : async () => config.clientSecret!
    clients.set(method, { clientId: config.clientId, redirectUris: [...config.redirectUris], secret })
  }
  const devIdentityProvider = options.oauth?.devIdentityProvider ?? clients.size === 0
  const fetch: ProviderFetch = (url, init) =>
    devIdentityProvider && url.startsWith(`${INTERNAL_ORIGIN}/`)
      ? options.devFetch(url, init)
      : options.fetch(url, init)
  const documents = createProviderDocuments({
    fetch,
    now: options.now,
    ...(options.oauth?.timeoutMs !== undefined ? { timeoutMs: options.oauth.timeoutMs } : {}),
    ...(options.oauth?.cacheMs !== undefined ? { cacheMs: options.oauth.cacheMs } : {}),
    ...(options.oauth?.jwksRefetchFloorMs !== undefined
      ? { jwksRefetchFloorMs: options.oauth.jwksRefetchFloorMs }
      : {}),
  })

  async function configuredProvider(
    method: OAuthMethod,
    config: OAuthProviderConfig,
  ): Promise<ResolvedProvider> {
    const issuer = issuers.get(method)!
    const discovered =
      config.tokenEndpoint && config.jwksUri && config.authorizationEndpoint && config.tokenEndpointAuthMethod
        ? undefined
        : await documents.discovery(issuer)
    const supported = discovered?.token_endpoint_auth_methods_supported
    // Discovery's default is client_secret_basic; Apple lists only client_secret_post.
    const authMethod =
      config.tokenEndpointAuthMethod ??
      (supported && !supported.includes('client_secret_basic') && supported.includes('client_secret_post')
        ? 'client_secret_post'
        : 'client_secret_basic')
    const authorizationEndpoint = config.authorizationEndpoint ?? discovered?.authorization_endpoint
    return {
      issuer,
      tokenEndpoint: config.tokenEndpoint ?? discovered!.token_endpoint,
      jwksUri: config.jwksUri ?? discovered!.jwks_uri,
      ...(authorizationEndpoint ? { authorizationEndpoint } : {}),
      client: { ...clients.get(method)!, authMethod },
      dev: false,
    }
  }

  return {
    /** Whether the dev identity provider is served and used for unconfigured methods. */
    devIdentityProvider,
    documents,
    /** Reaches a resolved provider: in-process for the dev identity provider. */
    fetch,
    /** Client ids of the configured providers, by method. */
    clientIds: Object.fromEntries(
      [...clients].map(([method, client]) => [method, client.clientId]),
    ) as Partial<Record<OAuthMethod, string>>,

    /**
     * The provider a sign-in with `method` uses: the organization's own endpoints if its proxy
     * settings name them, else the operator's configured client, else the dev identity provider
     * (when on); `OAUTH_PROVIDER_NOT_FOUND` otherwise.
     */
    async resolve(method: OAuthMethod, settings: ProxySettings | undefined): Promise<ResolvedProvider> {
      const own = settings?.oauth.providers?.[method]
      if (own)
        return {
          issuer: own.issuer,
          tokenEndpoint: own.tokenEndpoint,
          jwksUri: own.jwksUri,
          authorizationEndpoint: own.authorizationEndpoint,
          dev: false,
        }
      const config = configured[method]
      if (config) return configuredProvider(method, config)
      if (devIdentityProvider) return { ...devEndpoints(method), dev: true }
      throw new NotFoundError({
        code: 'OAUTH_PROVIDER_NOT_FOUND',
        field: 'provider',
        message: `no OAuth provider is configured for ${method}`,
      })
    },
  }
}

export type OAuthProviders = ReturnType<typeof createOAuthProviders>
