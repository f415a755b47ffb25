import type { AccountFilterType, Curve, OAuth2Provider, OtpType, SignInMethod } from './enums.ts'
import type { ApiKeyParams, AuthenticatorParams, OauthProviderParams, WalletParams } from './resources.ts'

export const PROXY_CONFIG_HEADER = 'X-Auth-Proxy-Config-Id'

/**
 * Requests and responses of the auth proxy (`{authProxyUrl}/v1/<path>`). Field names are the
 * seed's; the service also accepts the camelCase spelling of the snake_case ones.
 */
export interface ProxyMap {
  signup: {
    request: {
      userName?: string
      organizationName?: string
      userEmail?: string
      userPhoneNumber?: string
      /** OTP verification token proving the e-mail or phone number. */
      verificationToken?: string
      apiKeys?: ApiKeyParams[]
      authenticators?: AuthenticatorParams[]
      oauthProviders?: OauthProviderParams[]
      /** The seed's `{ path, curve }`, or the activity API's wallet parameters. */
      wallet?: { path: string; curve: Curve } | WalletParams
    }
    response: { organizationId: string; userId: string; walletId?: string; addresses?: string[] }
  }
  otp_init: {
    request: { otpType: OtpType; contact: string }
    response: { otpId: string }
  }
  otp_verify: {
    request: { otpId: string; otpCode: string; public_key?: string; publicKey?: string }
    response: { verificationToken: string }
  }
  otp_login: {
    request: {
      verificationToken: string
      publicKey: string
      client_signature?: string
      clientSignature?: string
      expirationSeconds?: string
      invalidateExisting?: boolean
      organizationId?: string
    }
    response: { session: string }
  }
  oauth2_authenticate: {
    request: {
      provider: OAuth2Provider
      authCode: string
      redirectUri: string
      codeVerifier: string
      nonce: string
      clientId: string
    }
    response: { oidcToken: string }
  }
  oauth_login: {
    request: {
      oidcToken: string
      publicKey: string
      invalidateExisting?: boolean
      expirationSeconds?: string
      organizationId?: string
    }
    response: { session: string }
  }
  account: {
    request: { filterType: AccountFilterType; filterValue: string; verificationToken?: string }
    response: { organizationId: string | null }
  }
  wallet_kit_config: {
    request: Record<string, never>
    response: {
      enabledProviders: SignInMethod[]
      sessionExpirationSeconds: string
      organizationId: string
      /** OAuth client ids by method, so the kit can start the authorization request. */
      oauthClientIds?: Partial<Record<SignInMethod, string>>
      /** Redirect URL registered for OAuth. */
      oauthRedirectUrl?: string
      /** Authorization endpoint by OAuth method (the local service's dev IdP unless configured). */
      oauthAuthorizationEndpoints?: Partial<Record<SignInMethod, string>>
      /**
       * Only from a development service (the local one): where its OTP messages are delivered.
       * The kit links to it from the code step; a production service never sends it.
       */
      devOutboxUrl?: string
    }
  }
}

export type ProxyPath = keyof ProxyMap
export type ProxyRequest<P extends ProxyPath> = ProxyMap[P]['request']
export type ProxyResponse<P extends ProxyPath> = ProxyMap[P]['response']
export const PROXY_PATHS: readonly ProxyPath[] = [
  'signup',
  'otp_init',
  'otp_verify',
  'otp_login',
  'oauth2_authenticate',
  'oauth_login',
  'account',
  'wallet_kit_config',
]

/** The auth-proxy section of the operator dashboard (settings API). */
export interface ProxySettings {
  enabled: boolean
  /** `['*']` allows every origin. */
  allowedOrigins: string[]
  enabledProviders: SignInMethod[]
  sessionExpirationSeconds: string
  emailTemplate: { subject: string; body: string }
  smsTemplate: { body: string }
  oauth: {
    redirectUrl: string
    clientIds: Partial<Record<SignInMethod, string>>
    /** Real OpenID Connect endpoints by method; a method without one uses the dev IdP. */
    providers?: Partial<Record<SignInMethod, OAuthProviderConfig>>
  }
}

/** Endpoints of a real OpenID Connect provider (public client with PKCE). */
export interface OAuthProviderConfig {
  /** Expected `iss` of its ID tokens. */
  issuer: string
  authorizationEndpoint: string
  tokenEndpoint: string
  jwksUri: string
}

/** Operator settings routes on the service (stamped by a root user of the parent organization). */
export const SETTINGS_ROUTES = { get: '/dev/settings/get', update: '/dev/settings/update' } as const

/** Body of `POST /dev/settings/get`. */
export interface AuthProxySettingsGetRequest {
  organizationId: string
  timestampMs: string
}

/** Body of `POST /dev/settings/update`: every settings field is optional and merged. */
export interface AuthProxySettingsUpdateRequest extends AuthProxySettingsGetRequest {
  settings: Partial<Omit<ProxySettings, 'oauth'>> & { oauth?: Partial<ProxySettings['oauth']> }
}

/** Answer of both settings routes. The proxy key never leaves the service. */
export interface AuthProxySettingsResponse {
  organizationId: string
  /** Goes in `X-Auth-Proxy-Config-Id`; null until the proxy is first configured. */
  authProxyConfigId: string | null
  proxyUserId: string | null
  settings: ProxySettings
}
