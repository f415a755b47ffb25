import {
  ACCOUNT_FILTER_TYPES,
  ACTIVITIES,
  type ActivityPath,
  type ActivityResult,
  activityResultOf,
  CURVES,
  decodeJwtClaims,
  type ErrorBody,
  isErrorBody,
  OAUTH_METHODS,
  OAUTH2_PROVIDERS,
  OTP_TYPES,
  PROXY_CONFIG_HEADER,
  PROXY_PATHS,
  type ProxyPath,
  type ProxyResponse,
  type QueryResponse,
  type SignInMethod,
  STAMP_HEADER,
  type WalletParams,
} from '@latchkey/protocol'
import type { Context, Hono } from 'hono'
import { MAX_SESSION_SECONDS } from '../../domain/sessions.ts'
import { ServiceError } from '../../errors.ts'
import { objectItem, Reader } from '../../pipeline/Reader.ts'
import type { Runtime } from '../../Runtime.ts'
import type { ProxyConfigRow } from '../../store/model.ts'
import { DEV_OIDC_PREFIX } from '../oauth/devIdp.ts'
import { methodOf } from '../signInState.ts'
import { signProxyStamp } from './signProxyStamp.ts'

/** Largest proxy request body (attestations included). */
const MAX_PROXY_BODY = 64 * 1024

/** An error answered by the activity API, relayed to the proxy's caller unchanged. */
class RelayedError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.message)
  }
}

/** Access-Control-* headers granting `origin`. */
function corsHeaders(origin: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Methods': 'POST, OPTIONS',
    'Access-Control-Allow-Headers': `Content-Type, Accept, ${PROXY_CONFIG_HEADER}`,
    'Access-Control-Max-Age': '600',
    Vary: 'Origin',
  }
}

const allows = (config: ProxyConfigRow, origin: string | undefined) =>
  config.settings.allowedOrigins.includes('*') ||
  (origin !== undefined && config.settings.allowedOrigins.includes(origin))

/** Top-level snake_case keys also accepted in camelCase (and the other way round). */
function camelizeKeys(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body }
  for (const [key, value] of Object.entries(body)) {
    if (!key.includes('_')) continue
    const camel = key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
    if (out[camel] === undefined) out[camel] = value
    delete out[key]
  }
  return out
}

function claimsOf(token: unknown): Record<string, unknown> {
  if (typeof token !== 'string') return {}
  try {
    return decodeJwtClaims<Record<string, unknown>>(token)
  } catch {
    return {}
  }
}

/**
 * The auth proxy (`/v1/*`): per call it checks `X-Auth-Proxy-Config-Id`, the `Origin` against
 * the configuration's allowed origins and the enabled sign-in methods, then signs the forwarded
 * request with the proxy user's API key and sends it through the activity API's public routes
 * (in-process, same app), and relays the answer.
 */
export function proxyRoutes(app: Hono, service: Runtime): void {
  const enabledConfigs = () => service.store.all('proxyConfigs').filter((config) => config.enabled)
  // A preflight carries no config id: grant the origins some enabled configuration allows; the
  // real request is then checked against its own configuration.
  const preflightAllows = (origin: string | undefined) =>
    origin !== undefined && enabledConfigs().some((config) => allows(config, origin))

  app.options('/v1/*', (c) => {
    const origin = c.req.header('origin')
    if (!preflightAllows(origin)) {
      const error = new ServiceError('ORIGIN_NOT_ALLOWED', `origin ${origin ?? '(none)'} is not allowed`)
      return c.json(error.toBody(), 403)
    }
    return c.body(null, 204, corsHeaders(origin!))
  })

  app.post('/v1/:path', async (c) => {
    const origin = c.req.header('origin')
    let grant: Record<string, string> | undefined = preflightAllows(origin) ? corsHeaders(origin!) : undefined
    try {
      const configId = c.req.header(PROXY_CONFIG_HEADER)
      if (!configId)
        throw new ServiceError('PROXY_CONFIG_MISSING', `the ${PROXY_CONFIG_HEADER} header is required`)
      const config = service.store.get('proxyConfigs', configId)
      if (!config)
        throw new ServiceError(
          'PROXY_CONFIG_NOT_FOUND',
          `no auth-proxy configuration ${configId.slice(0, 100)}`,
        )
      if (!allows(config, origin)) {
        grant = undefined
        throw new ServiceError(
          'ORIGIN_NOT_ALLOWED',
          `origin ${origin ?? '(none)'} is not in this configuration's allowed origins`,
        )
      }
      grant = origin ? corsHeaders(origin) : undefined
      if (!config.enabled || !config.proxyUserId || !config.sealedProxyPrivateKey)
        throw new ServiceError('PROXY_DISABLED', 'the auth proxy is switched off for this organization')
      const path = c.req.param('path') as ProxyPath
      if (!PROXY_PATHS.includes(path))
        throw new ServiceError('ROUTE_NOT_FOUND', `no proxy route /v1/${path.slice(0, 80)}`)
      const bytes = new Uint8Array(await c.req.arrayBuffer())
      if (bytes.length > MAX_PROXY_BODY)
        throw new ServiceError('PAYLOAD_TOO_LARGE', `request body exceeds ${MAX_PROXY_BODY} bytes`)
      let json: unknown
      try {
        json = bytes.length === 0 ? {} : JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
      } catch (error) {
        throw new ServiceError('BODY_INVALID', `request body is not valid JSON: ${(error as Error).message}`)
      }
      if (typeof json !== 'object' || json === null || Array.isArray(json))
        throw new ServiceError('BODY_INVALID', 'request body must be a JSON object')
      const call = new ProxyCall(app, service, config, c)
      const response = await call.run(path, new Reader(camelizeKeys(json as Record<string, unknown>), ''))
      return c.json(response, 200, grant)
    } catch (error) {
      if (error instanceof RelayedError) return c.json(error.body, error.status as 400, grant)
      const serviceError =
        error instanceof ServiceError
          ? error
          : (() => {
              console.error('auth proxy failure', error)
              return new ServiceError('INTERNAL', 'internal error')
            })()
      return c.json(serviceError.toBody(), serviceError.status as 400, grant)
    }
  })
}

const lastTimestamps = new WeakMap<Runtime, number>()

/**
 * `timestampMs` for a forwarded request, strictly increasing per service: the activity API
 * answers an exact replay of signed bytes with the activity they created, and two identical
 * calls in one millisecond (a user retrying a wrong code) must each be a new activity.
 */
function nextTimestamp(service: Runtime): string {
  const next = Math.max(service.now(), (lastTimestamps.get(service) ?? 0) + 1)
  lastTimestamps.set(service, next)
  return String(next)
}

/** One proxied request: its configuration, and calls to the activity API as the proxy user. */
class ProxyCall {
  constructor(
    private readonly app: Hono,
    private readonly service: Runtime,
    private readonly config: ProxyConfigRow,
    private readonly c: Context,
  ) {}

  private get settings() {
    return this.config.settings
  }

  private get organizationId() {
    return this.config.organizationId
  }

  private requireMethod(method: SignInMethod | undefined, what: string): void {
    if (method === undefined || !this.settings.enabledProviders.includes(method))
      throw new ServiceError(
        'METHOD_DISABLED',
        `${what} is not enabled for this auth-proxy configuration`,
        undefined,
        method ? { method } : {},
      )
  }

  /** POSTs `body` to a public route, stamped with the proxy key (opened for this signature only). */
  private async send(route: string, body: Record<string, unknown>): Promise<unknown> {
    const text = JSON.stringify(body)
    const publicKey = this.service.store.findBy('apiKeys', 'userId', this.config.proxyUserId!)[0]?.publicKey
    if (!publicKey)
      throw new ServiceError('PROXY_DISABLED', 'the auth proxy has no key; switch it off and on again')
    const privateKey = this.service.open(this.config.sealedProxyPrivateKey!)
    let stamp: string
    try {
      stamp = await signProxyStamp(text, privateKey, publicKey)
    } finally {
      privateKey.fill(0)
    }
    const response = await this.app.request(route, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', [STAMP_HEADER]: stamp },
      body: text,
    })
    const reply: unknown = await response.json().catch(() => undefined)
    if (!response.ok)
      throw new RelayedError(
        response.status,
        isErrorBody(reply)
          ? reply
          : new ServiceError('INTERNAL', 'the activity API answered unexpectedly').toBody(),
      )
    return reply
  }

  private async submit<P extends ActivityPath>(
    path: P,
    parameters: Record<string, unknown>,
    organizationId = this.organizationId,
  ): Promise<ActivityResult<P>> {
    const reply = (await this.send(`/public/v1/submit/${path}`, {
      type: ACTIVITIES[path].type,
      timestampMs: nextTimestamp(this.service),
      organizationId,
      parameters,
    })) as { activity: { status: string; result?: Record<string, unknown> } }
    const result = activityResultOf(path, reply.activity)
    if (reply.activity.status !== 'ACTIVITY_STATUS_COMPLETED' || result === undefined)
      throw new ServiceError('INTERNAL', `${path} did not complete (${reply.activity.status})`)
    return result
  }

  /** First sub-organization of the parent matching a `list_suborgs` filter, or null. */
  private async findSubOrganization(filterType: string, filterValue: string): Promise<string | null> {
    const reply = (await this.send('/public/v1/query/list_suborgs', {
      organizationId: this.organizationId,
      timestampMs: nextTimestamp(this.service),
      filterType,
      filterValue,
      paginationOptions: { limit: '1' },
    })) as QueryResponse<'list_suborgs'>
    return reply.organizationIds[0] ?? null
  }

  private async targetOrganization(
    r: Reader,
    filterType: string,
    filterValue: string,
    what: string,
  ): Promise<string> {
    const explicit = r.optString('organizationId', { max: 200 })
    // The proxy logs people in to sub-organizations only, never to the parent it acts for.
    if (explicit === this.organizationId)
      throw new ServiceError(
        'PERMISSION_DENIED',
        'the auth proxy logs in to sub-organizations only',
        'organizationId',
      )
    if (explicit !== undefined) return explicit
    const found = await this.findSubOrganization(filterType, filterValue)
    if (!found) throw new ServiceError('ACCOUNT_NOT_FOUND', `no account for this ${what}; sign up first`)
    return found
  }

  private sessionSeconds(r: Reader): string {
    return r.optUintString('expirationSeconds') ?? this.settings.sessionExpirationSeconds
  }

  run(path: ProxyPath, r: Reader): Promise<ProxyResponse<ProxyPath>> {
    switch (path) {
      case 'otp_init':
        return this.otpInit(r)
      case 'otp_verify':
        return this.otpVerify(r)
      case 'otp_login':
        return this.otpLogin(r)
      case 'oauth2_authenticate':
        return this.oauth2Authenticate(r)
      case 'oauth_login':
        return this.oauthLogin(r)
      case 'account':
        return this.account(r)
      case 'signup':
        return this.signup(r)
      case 'wallet_kit_config':
        return Promise.resolve(this.walletKitConfig())
    }
  }

  private async otpInit(r: Reader): Promise<ProxyResponse<'otp_init'>> {
    const otpType = r.enum('otpType', OTP_TYPES)
    this.requireMethod(
      otpType === 'OTP_TYPE_EMAIL' ? 'email' : 'sms',
      otpType === 'OTP_TYPE_EMAIL' ? 'e-mail OTP' : 'SMS OTP',
    )
    const { otpId } = await this.submit('init_otp', { otpType, contact: r.string('contact', { max: 320 }) })
    return { otpId }
  }

  private async otpVerify(r: Reader): Promise<ProxyResponse<'otp_verify'>> {
    if (!this.settings.enabledProviders.some((m) => m === 'email' || m === 'sms'))
      this.requireMethod(undefined, 'OTP')
    const publicKey = r.optString('publicKey', { max: 200 })
    const { verificationToken } = await this.submit('verify_otp', {
      otpId: r.string('otpId', { max: 200 }),
      otpCode: r.string('otpCode', { max: 20 }),
      ...(publicKey !== undefined ? { publicKey } : {}),
    })
    return { verificationToken }
  }

  private async otpLogin(r: Reader): Promise<ProxyResponse<'otp_login'>> {
    const verificationToken = r.string('verificationToken', { max: 8192 })
    const claims = claimsOf(verificationToken)
    const email = claims.verification_type !== 'OTP_TYPE_SMS'
    this.requireMethod(email ? 'email' : 'sms', email ? 'e-mail OTP' : 'SMS OTP')
    const contact = typeof claims.contact === 'string' ? claims.contact : ''
    if (!contact)
      throw new ServiceError(
        'VERIFICATION_TOKEN_INVALID',
        'verificationToken is not a verification token',
        'verificationToken',
      )
    const organizationId = await this.targetOrganization(
      r,
      email ? 'EMAIL' : 'PHONE_NUMBER',
      contact,
      email ? 'e-mail address' : 'phone number',
    )
    const clientSignature = r.optString('clientSignature', { max: 300 })
    const invalidateExisting = r.optBool('invalidateExisting')
    const { session } = await this.submit(
      'otp_login',
      {
        verificationToken,
        publicKey: r.string('publicKey', { max: 200 }),
        expirationSeconds: this.sessionSeconds(r),
        ...(clientSignature !== undefined ? { clientSignature } : {}),
        ...(invalidateExisting !== undefined ? { invalidateExisting } : {}),
      },
      organizationId,
    )
    return { session }
  }

  private async oauth2Authenticate(r: Reader): Promise<ProxyResponse<'oauth2_authenticate'>> {
    const provider = r.enum('provider', OAUTH2_PROVIDERS)
    this.requireMethod(methodOf(provider), `sign-in with ${methodOf(provider)}`)
    const { oidcToken } = await this.submit('oauth2_authenticate', {
      provider,
      authCode: r.string('authCode', { max: 4096 }),
      redirectUri: r.string('redirectUri', { max: 2048 }),
      codeVerifier: r.string('codeVerifier', { max: 128 }),
      nonce: r.string('nonce', { max: 128 }),
      clientId: r.string('clientId', { max: 512 }),
    })
    return { oidcToken }
  }

  private async oauthLogin(r: Reader): Promise<ProxyResponse<'oauth_login'>> {
    const oidcToken = r.string('oidcToken', { max: 8192 })
    const provider = claimsOf(oidcToken).provider
    const method = OAUTH2_PROVIDERS.includes(provider as never) ? methodOf(provider as never) : undefined
    if (!method)
      throw new ServiceError(
        'OIDC_TOKEN_INVALID',
        'oidcToken is not a token from oauth2_authenticate',
        'oidcToken',
      )
    this.requireMethod(method, `sign-in with ${method}`)
    const organizationId = await this.targetOrganization(r, 'OIDC_TOKEN', oidcToken, 'OAuth account')
    const invalidateExisting = r.optBool('invalidateExisting')
    const { session } = await this.submit(
      'oauth_login',
      {
        oidcToken,
        publicKey: r.string('publicKey', { max: 200 }),
        expirationSeconds: this.sessionSeconds(r),
        ...(invalidateExisting !== undefined ? { invalidateExisting } : {}),
      },
      organizationId,
    )
    return { session }
  }

  private async account(r: Reader): Promise<ProxyResponse<'account'>> {
    const filterType = r.enum('filterType', ACCOUNT_FILTER_TYPES)
    const filterValue = r.string('filterValue', { max: 8192 })
    return { organizationId: await this.findSubOrganization(filterType, filterValue) }
  }

  private async signup(r: Reader): Promise<ProxyResponse<'signup'>> {
    const userEmail = r.optString('userEmail', { max: 320 })?.trim().toLowerCase()
    const userPhoneNumber = r.optString('userPhoneNumber', { max: 32 })?.trim()
    const verificationToken = r.optString('verificationToken', { max: 8192 })
    const apiKeys = (r.optArray('apiKeys', (v) => v, { max: 10 }) ?? []) as Record<string, unknown>[]
    const authenticators = (r.optArray('authenticators', (v) => v, { max: 10 }) ?? []) as Record<
      string,
      unknown
    >[]
    const oauthProviders = r.optArray('oauthProviders', objectItem, { max: 5 }) ?? []

    // Every sign-in method the new account brings must be switched on.
    if (authenticators.length > 0) this.requireMethod('passkey', 'passkey sign-up')
    // A short-lived P-256 key is the client's session key riding along with another method;
    // any other key (an Ethereum or Solana wallet, a permanent API key) is wallet sign-up.
    const isSessionKey = (key: Record<string, unknown>) =>
      key.curveType === 'API_KEY_CURVE_P256' &&
      typeof key.expirationSeconds === 'string' &&
      /^\d{1,9}$/.test(key.expirationSeconds) &&
      Number(key.expirationSeconds) <= MAX_SESSION_SECONDS
    const walletKeys = apiKeys.filter((key) => !isSessionKey(key))
    if (walletKeys.length > 0) this.requireMethod('wallet', 'wallet sign-up')
    const oauthClaims = oauthProviders.map((provider) => claimsOf(provider.value.oidcToken))
    for (const claims of oauthClaims) {
      const provider = claims.provider
      this.requireMethod(
        OAUTH2_PROVIDERS.includes(provider as never) ? methodOf(provider as never) : undefined,
        `sign-up with ${String(provider ?? 'this OAuth provider')}`,
      )
    }
    const tokenClaims = verificationToken !== undefined ? claimsOf(verificationToken) : undefined
    if (tokenClaims)
      this.requireMethod(tokenClaims.verification_type === 'OTP_TYPE_SMS' ? 'sms' : 'email', 'OTP sign-up')
    if (authenticators.length + walletKeys.length + oauthProviders.length === 0 && !verificationToken)
      throw new ServiceError(
        'FIELD_REQUIRED',
        'sign-up needs a way to log in: authenticators, wallet apiKeys, oauthProviders or a verificationToken',
      )
    // An unproven e-mail or phone would route someone else's OTP login into this account: the
    // proxy takes them only with proof (the activity checks the proof's signature).
    if (userEmail !== undefined) {
      const byOtp = tokenClaims?.verification_type === 'OTP_TYPE_EMAIL' && tokenClaims.contact === userEmail
      const byOauth = oauthClaims.some(
        (claims) => claims.email === userEmail && claims.email_verified !== false,
      )
      if (!byOtp && !byOauth)
        throw new ServiceError(
          'VERIFICATION_TOKEN_INVALID',
          'userEmail must be proven by a verificationToken from otp_verify (or an OAuth token for that e-mail)',
          'userEmail',
        )
      if (await this.findSubOrganization('EMAIL', userEmail))
        throw new ServiceError(
          'ALREADY_EXISTS',
          'an account with this e-mail address exists; log in instead',
          'userEmail',
        )
    }
    if (userPhoneNumber !== undefined) {
      if (!(tokenClaims?.verification_type === 'OTP_TYPE_SMS' && tokenClaims.contact === userPhoneNumber))
        throw new ServiceError(
          'VERIFICATION_TOKEN_INVALID',
          'userPhoneNumber must be proven by a verificationToken from otp_verify',
          'userPhoneNumber',
        )
      if (await this.findSubOrganization('PHONE_NUMBER', userPhoneNumber))
        throw new ServiceError(
          'ALREADY_EXISTS',
          'an account with this phone number exists; log in instead',
          'userPhoneNumber',
        )
    }

    const userName = r.optString('userName', { max: 256 }) ?? userEmail ?? userPhoneNumber ?? 'New user'
    const wallet = r.optObject('wallet')
    const result = await this.submit('create_sub_organization', {
      subOrganizationName: r.optString('organizationName', { max: 256 }) ?? `${userName}'s organization`,
      rootUsers: [
        {
          userName,
          ...(userEmail !== undefined ? { userEmail } : {}),
          ...(userPhoneNumber !== undefined ? { userPhoneNumber } : {}),
          apiKeys,
          authenticators,
          oauthProviders: oauthProviders.map((p) => p.value),
        },
      ],
      rootQuorumThreshold: 1,
      ...(wallet ? { wallet: walletParams(wallet) } : {}),
      ...(verificationToken !== undefined ? { verificationToken } : {}),
    })
    return {
      organizationId: result.subOrganizationId,
      userId: result.rootUserIds[0]!,
      ...(result.wallet ? { walletId: result.wallet.walletId, addresses: result.wallet.addresses } : {}),
    }
  }

  private walletKitConfig(): ProxyResponse<'wallet_kit_config'> {
    const enabled = this.settings.enabledProviders
    const origin = new URL(this.c.req.url).origin
    const oauth = OAUTH_METHODS.filter((method) => enabled.includes(method))
    return {
      enabledProviders: [...enabled],
      sessionExpirationSeconds: this.settings.sessionExpirationSeconds,
      organizationId: this.organizationId,
      oauthClientIds: Object.fromEntries(
        oauth
          .filter((m) => this.settings.oauth.clientIds[m])
          .map((m) => [m, this.settings.oauth.clientIds[m]!]),
      ),
      oauthRedirectUrl: this.settings.oauth.redirectUrl,
      oauthAuthorizationEndpoints: Object.fromEntries(
        oauth.map((m) => [
          m,
          this.settings.oauth.providers?.[m]?.authorizationEndpoint ??
            `${origin}${DEV_OIDC_PREFIX}/${m}/authorize`,
        ]),
      ),
    }
  }
}

/** The seed's `{ path, curve }` (one account, Ethereum or Solana address) or the activity API's wallet. */
function walletParams(wallet: Reader): WalletParams | Record<string, unknown> {
  if (wallet.has('walletName') || wallet.has('accounts')) return wallet.value
  const curve = wallet.enum('curve', CURVES)
  const path = wallet.string('path', { max: 200 })
  return {
    walletName: 'Default Wallet',
    accounts: [
      {
        curve,
        pathFormat: 'PATH_FORMAT_BIP32',
        path,
        addressFormat: curve === 'CURVE_SECP256K1' ? 'ADDRESS_FORMAT_ETHEREUM' : 'ADDRESS_FORMAT_SOLANA',
      },
    ],
  }
}
