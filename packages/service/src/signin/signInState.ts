import {
  OAUTH_METHODS,
  type OAuth2Provider,
  type OAuthMethod,
  type ProxySettings,
  SIGN_IN_METHODS,
  type VerificationTokenClaims,
} from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import type { Hono } from 'hono'
import { CryptoInputError, signJwt, verifyJwt } from '../crypto/index.ts'
import { ApiError } from '../errors.ts'
import type { PipelineEnv } from '../pipeline/readJson.ts'
import type { Runtime } from '../Runtime.ts'
import type { PluginRow, ProxyConfigRow } from '../store/model.ts'
import type { Reads, Transaction } from '../store/Store.ts'
import { createServiceOidc, type ServiceOidc, SIGN_IN_KEY_ID } from './oauth/createServiceOidc.ts'
import { createDevIdp, DEV_OIDC_PREFIX, type DevIdp } from './oauth/devIdp.ts'
import type { OAuthProviderEndpoints } from './oauth/exchangeAuthorizationCode.ts'
import { createOtpEngine, type OtpEngine, type OtpRecord } from './otp/createOtpEngine.ts'
import { DEFAULT_EMAIL_TEMPLATE, DEFAULT_SMS_TEMPLATE } from './otp/renderTemplate.ts'
import { createOutbox, type Outbox } from './outbox/createOutbox.ts'

/** `iss` of the OIDC tokens the service issues (`oauth2_authenticate`). */
export const SERVICE_OIDC_ISSUER = 'https://latchkey.invalid/oidc'
/** Origin the service uses to reach its own dev identity provider in-process. */
export const INTERNAL_ORIGIN = 'http://latchkey.internal'

const SIGN_IN_KEY_ROW = 'sign-in-key'

/** Settings of a new proxy configuration. */
export function defaultProxySettings(): ProxySettings {
  return {
    enabled: true,
    allowedOrigins: ['*'],
    enabledProviders: [...SIGN_IN_METHODS],
    sessionExpirationSeconds: '900',
    emailTemplate: { ...DEFAULT_EMAIL_TEMPLATE },
    smsTemplate: { ...DEFAULT_SMS_TEMPLATE },
    oauth: {
      redirectUrl: '',
      clientIds: Object.fromEntries(OAUTH_METHODS.map((m) => [m, `latchkey-dev-${m}`])),
    },
  }
}

/** The method name (`google`) of an `OAUTH2_PROVIDER_GOOGLE`. */
export const methodOf = (provider: OAuth2Provider) =>
  provider.replace('OAUTH2_PROVIDER_', '').toLowerCase() as OAuthMethod

/** What the sign-in plugin keeps per service instance (never module-wide: several services may coexist). */
export interface SignInState {
  outbox: Outbox
  otp: OtpEngine
  devIdp: DevIdp
  oidc: ServiceOidc
  /** The service app, for in-process calls (proxy forwarding, dev IdP exchange); set by `routes`. */
  app?: Hono<PipelineEnv>
}

const states = new WeakMap<Runtime, SignInState>()

/** Creates the service's sign-in key (verification tokens, service OIDC tokens) once. */
export function bootstrapSignInKey(tx: Transaction, service: Runtime): void {
  if (tx.get('pluginRows', SIGN_IN_KEY_ROW)) return
  const key = p256.utils.randomSecretKey()
  const now = service.now()
  tx.put('pluginRows', {
    id: SIGN_IN_KEY_ROW,
    kind: SIGN_IN_KEY_ROW,
    data: { sealedPrivateKey: service.seal(key), publicKey: bytesToHex(p256.getPublicKey(key, true)) },
    createdAt: now,
    updatedAt: now,
  })
  key.fill(0)
}

function signInKey(service: Runtime): { sealedPrivateKey: string; publicKey: string } {
  const row = service.store.get('pluginRows', SIGN_IN_KEY_ROW)
  if (!row) throw new Error('sign-in key not bootstrapped')
  return row.data as { sealedPrivateKey: string; publicKey: string }
}

/**
 * OTP records are written straight to the store, outside the activity's transaction: a wrong
 * code fails the activity (rolling its writes back), yet its attempt must still count.
 */
function otpStorage(service: Runtime) {
  return {
    get: (otpId: string) => {
      const row = service.store.get('pluginRows', `otp:${otpId}`)
      return row?.kind === 'otp' ? (row.data as unknown as OtpRecord) : undefined
    },
    put: (record: OtpRecord) => {
      const existing = service.store.get('pluginRows', `otp:${record.otpId}`)
      const now = service.now()
      const row: PluginRow = {
        id: `otp:${record.otpId}`,
        kind: 'otp',
        organizationId: record.organizationId,
        data: { ...record },
        createdAt: existing?.createdAt ?? now,
        updatedAt: now,
      }
      service.store.write([['pluginRows', row.id, row]])
    },
  }
}

export function signInState(service: Runtime): SignInState {
  let state = states.get(service)
  if (state) return state
  const now = () => service.now()
  const outbox = createOutbox()
  const key = signInKey(service)
  const openKey = () => service.open(signInKey(service).sealedPrivateKey)
  state = {
    outbox,
    otp: createOtpEngine({
      storage: otpStorage(service),
      issueToken: (claims) => {
        const privateKey = openKey()
        try {
          return signJwt(claims, privateKey, SIGN_IN_KEY_ID)
        } finally {
          privateKey.fill(0)
        }
      },
      deliver: (message) => outbox.deliver(message),
      now,
      newId: () => service.newId(),
    }),
    devIdp: createDevIdp({ now }),
    oidc: createServiceOidc({
      privateKey: openKey,
      publicKey: hexToBytes(key.publicKey),
      issuer: SERVICE_OIDC_ISSUER,
      now,
    }),
  }
  states.set(service, state)
  return state
}

/** Verifies an OTP verification token (signature by the sign-in key, expiry, claims). */
export function verifyVerificationToken(
  service: Runtime,
  token: unknown,
  field: string,
): VerificationTokenClaims {
  if (typeof token !== 'string')
    throw new ApiError('VERIFICATION_TOKEN_INVALID', `${field} must be a verification token`, field)
  let claims: Partial<VerificationTokenClaims>
  try {
    claims = verifyJwt(token, hexToBytes(signInKey(service).publicKey), Math.floor(service.now() / 1000))
  } catch (error) {
    if (!(error instanceof CryptoInputError)) throw error
    const expired = /expired/.test(error.message)
    throw new ApiError(
      'VERIFICATION_TOKEN_INVALID',
      expired ? `${field} has expired; verify a new code` : `${field} is not a valid verification token`,
      field,
    )
  }
  if (
    typeof claims.id !== 'string' ||
    typeof claims.contact !== 'string' ||
    typeof claims.exp !== 'number' ||
    (claims.verification_type !== 'OTP_TYPE_EMAIL' && claims.verification_type !== 'OTP_TYPE_SMS')
  )
    throw new ApiError('VERIFICATION_TOKEN_INVALID', `${field} is not a verification token`, field)
  return claims as VerificationTokenClaims
}

/**
 * Marks a single-use token (verification token id, OIDC `jti`) spent inside `tx`, so it counts
 * only if the login that spends it commits. Throws `errorCode` when it was spent before.
 */
export function spendOnce(
  ctx: { tx: Transaction; now: number },
  kind: 'verification-token' | 'oidc-token',
  id: string,
  error: { errorCode: 'VERIFICATION_TOKEN_INVALID' | 'OIDC_TOKEN_REPLAYED'; message: string; field: string },
): void {
  const rowId = `${kind}:${id}`
  if (ctx.tx.get('pluginRows', rowId)) throw new ApiError(error.errorCode, error.message, error.field)
  ctx.tx.put('pluginRows', { id: rowId, kind, data: {}, createdAt: ctx.now, updatedAt: ctx.now })
}

/** The proxy configuration of an organization, or of its parent for a sub-organization. */
export function proxyConfigFor(reads: Reads, organizationId: string): ProxyConfigRow | undefined {
  const own = reads.findBy('proxyConfigs', 'organizationId', organizationId)[0]
  if (own) return own
  const parent = reads.get('organizations', organizationId)?.parentOrganizationId
  return parent ? reads.findBy('proxyConfigs', 'organizationId', parent)[0] : undefined
}

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
