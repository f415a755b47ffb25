import type { OAuth2AuthenticateParameters } from './activities.ts'
import type { ClientSignature } from './clientSignature.ts'
import type { AccountFilterType, Curve, OtpType, SignInMethod } from './enums.ts'
import type { ApiKeyParams, AuthenticatorParams, OauthProviderParams, WalletParams } from './resources.ts'

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
      /** Required when `verificationToken` is bound to a key: that key's consent to this sign-up. */
      clientSignature?: string | ClientSignature
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
      /** The seed's hex signature over the token, or the published clients' object. */
      client_signature?: string | ClientSignature
      clientSignature?: string | ClientSignature
      expirationSeconds?: string
      invalidateExisting?: boolean
      /**
       * A session profile of the account's organization or of the app's (issue 37): the session
       * can do only what its scope allows, and lives as long as the profile says.
       */
      sessionProfileId?: string
      organizationId?: string
    }
    response: { session: string }
  }
  oauth2_authenticate: {
    request: OAuth2AuthenticateParameters
    response: { oidcToken: string }
  }
  oauth_login: {
    request: {
      oidcToken: string
      publicKey: string
      invalidateExisting?: boolean
      expirationSeconds?: string
      /**
       * A session profile of the account's organization or of the app's (issue 37): the session
       * can do only what its scope allows, and lives as long as the profile says.
       */
      sessionProfileId?: string
      organizationId?: string
    }
    response: { session: string }
  }
  account: {
    request: { filterType: AccountFilterType; filterValue: string; verificationToken?: string }
    response: { organizationId: string | null }
  }
  /** What the published clients fetch at start-up: bot-check settings (none on this service). */
  wallet_kit_client_params: {
    request: Record<string, never>
    response: { turnstileSiteKey?: string }
  }
  /** `otp_init` plus a target key the code is encrypted to, signed like an import bundle. */
  otp_init_v2: {
    request: { otpType: OtpType; contact: string }
    response: { otpId: string; otpEncryptionTargetBundle: string }
  }
  /**
   * `otp_verify` with the code HPKE-encrypted to the `otp_init_v2` target: `encryptedOtpBundle`
   * is `{ encappedPublic, ciphertext }` JSON whose plaintext is `{ otp_code, public_key }`.
   */
  otp_verify_v2: {
    request: { otpId: string; encryptedOtpBundle: string }
    response: { verificationToken: string }
  }
  /** `otp_login` whose `clientSignature` is the published object (required). */
  otp_login_v2: {
    request: {
      verificationToken: string
      publicKey: string
      clientSignature: ClientSignature
      expirationSeconds?: string
      invalidateExisting?: boolean
      /**
       * A session profile of the account's organization or of the app's (issue 37): the session
       * can do only what its scope allows, and lives as long as the profile says.
       */
      sessionProfileId?: string
      organizationId?: string
    }
    response: { session: string }
  }
  /** `signup` as the published clients send it (also answers `wallet`). */
  signup_v2: {
    request: ProxyMap['signup']['request']
    response: ProxyMap['signup']['response'] & { wallet?: { walletId: string; addresses: string[] } }
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
      /**
       * The operator's CAPTCHA on `otp_init`: the kit renders this widget on the e-mail/SMS step (and
       * again to resend) and sends its token (`X-Captcha-Token`); a passed one is not held back by
       * the contact's budget.
       */
      captcha?: { provider: 'turnstile' | 'hcaptcha'; siteKey: string }
      /** How many characters the service's codes have (the operator's floor), as the published type writes it. */
      otpLength?: string
      /** Whether the codes are alphanumeric (Crockford's base 32) rather than digits only. */
      otpAlphanumeric?: boolean
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
  'wallet_kit_client_params',
  'otp_init_v2',
  'otp_verify_v2',
  'otp_login_v2',
  'signup_v2',
]

/** The auth-proxy section of the operator dashboard (settings API). */
export interface ProxySettings {
  enabled: boolean
  /** `['*']` allows every origin. */
  allowedOrigins: string[]
  enabledProviders: SignInMethod[]
  sessionExpirationSeconds: string
  /**
   * Longest session a login in the organization or its sub-organizations gets, whatever it asks
   * for (`expirationSeconds`) or its session profile says: a longer one is cut to it, as
   * `otpExpirationSeconds` cuts a code's. At least `sessionExpirationSeconds`. @default 30 days
   */
  maxSessionExpirationSeconds?: string
  /** Longest a one-time code lives; `init_otp` may ask for less, never more. @default '300' */
  otpExpirationSeconds?: string
  /**
   * Shortest code the service sends (6 to 9 digits); `init_otp` may ask for a longer one, never a
   * shorter one, so whoever requests codes for an address cannot make them easier to guess. @default 6
   */
  otpLength?: number
  /**
   * The characters of the codes the service sends: `digits` (0-9) or `alphanumeric` (Crockford's
   * base 32: 0-9 and A-Z without I, L, O, U; typed in either case, O read as 0 and I, L as 1).
   * @default 'digits'
   */
  otpAlphabet?: 'digits' | 'alphanumeric'
  /** App name in OTP messages (`{{appName}}`); only the operator sets it. @default the organization's name */
  appName?: string
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
