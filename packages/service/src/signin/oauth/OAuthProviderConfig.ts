import type { OAuthMethod } from '@latchkey/protocol'

/** Apple's client secret is a short-lived ES256 JWT the service signs with the operator's key. */
export interface AppleClientKey {
  /** Apple developer team id (`iss` of the client-secret JWT). */
  teamId: string
  /** Id of the Sign in with Apple key (`kid` of the client-secret JWT). */
  keyId: string
  /** The key's PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, the `.p8` file Apple hands out). */
  privateKey: string
}

/** One OAuth provider the service signs people in with, as a confidential OpenID Connect client. */
export interface OAuthProviderConfig {
  /** The client id the provider issued to this app (the `aud` of its ID tokens). */
  clientId: string
  /** The client secret; Apple takes `appleKey` instead. */
  clientSecret?: string
  /** Apple only: the key the client-secret JWT is signed with. */
  appleKey?: AppleClientKey
  /**
   * Redirect URIs registered at the provider; an exchange naming another is refused before the
   * provider is called.
   */
  redirectUris: string[]
  /**
   * The provider's issuer: its `iss`, and where discovery (`/.well-known/openid-configuration`) is read.
   * @default the well-known issuer of google, apple and facebook (required for x and discord)
   */
  issuer?: string
  /** Overrides discovery's `authorization_endpoint`. */
  authorizationEndpoint?: string
  /** Overrides discovery's `token_endpoint`. */
  tokenEndpoint?: string
  /** Overrides discovery's `jwks_uri`. */
  jwksUri?: string
  /**
   * How the client authenticates at the token endpoint.
   * @default `client_secret_post` if discovery lists it (Apple's only method), else `client_secret_basic`
   */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post'
}

/** `CreateServiceOptions.oauth`: the OAuth providers of the service. */
export interface OAuthOptions {
  /** Providers by sign-in method. @default {} */
  providers?: Partial<Record<OAuthMethod, OAuthProviderConfig>>
  /**
   * Serve the dev identity provider (`/dev/oidc/*`) and use it for methods without a provider.
   * @default true when no provider is configured, else false
   */
  devIdentityProvider?: boolean
  /** Longest wait for one call to a provider (discovery, JWKS, token). @default 10000 */
  timeoutMs?: number
  /**
   * How long discovery and JWKS documents are kept when the provider sends no `Cache-Control`
   * max-age; a max-age is honoured up to a day.
   * @default 3600000
   */
  cacheMs?: number
  /**
   * Shortest time between two JWKS reads triggered by a `kid` the cached set lacks (a key rotation),
   * so tokens with made-up `kid`s cannot make the service hammer the provider.
   * @default 60000
   */
  jwksRefetchFloorMs?: number
}

/** Issuers of the providers that publish one fixed OpenID Connect issuer. */
export const WELL_KNOWN_ISSUERS: Partial<Record<OAuthMethod, string>> = {
  google: 'https://accounts.google.com',
  apple: 'https://appleid.apple.com',
  facebook: 'https://www.facebook.com',
}
