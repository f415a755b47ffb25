import {
  OAUTH_METHODS,
  type OAuth2Provider,
  type OAuthMethod,
  type ProxySettings,
  SIGN_IN_METHODS,
  type VerificationTokenClaims,
} from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import type { Hono } from 'hono'
import { CryptoInputError, signJwt, verifyJwt } from '../crypto/index.ts'
import { ApiError } from '../errors.ts'
import { localOnly } from '../pipeline/originPolicy.ts'
import type { PipelineEnv } from '../pipeline/readJson.ts'
import type { Runtime } from '../Runtime.ts'
import type { OrganizationRow, ProxyConfigRow } from '../store/model.ts'
import type { Reads, Transaction } from '../store/Store.ts'
import { createServiceOidc, type ServiceOidc, SIGN_IN_KEY_ID } from './oauth/createServiceOidc.ts'
import { createDevIdp, DEV_OIDC_PREFIX, type DevIdp } from './oauth/devIdp.ts'
import type { OAuthProviderEndpoints } from './oauth/exchangeAuthorizationCode.ts'
import { createOtpEngine, type OtpEngine, type OtpRecord, type OtpStorage } from './otp/createOtpEngine.ts'
import { DEFAULT_EMAIL_TEMPLATE, DEFAULT_SMS_TEMPLATE } from './otp/renderTemplate.ts'
import { createOutbox, type Outbox } from './outbox/createOutbox.ts'

/** `iss` of the OIDC tokens the service issues (`oauth2_authenticate`). */
export const SERVICE_OIDC_ISSUER = 'https://latchkey.invalid/oidc'
/** Origin the service uses to reach its own dev identity provider in-process. */
export const INTERNAL_ORIGIN = 'http://latchkey.internal'

const SIGN_IN_KEY_ROW = 'sign-in-key'
/** The server secret OTP codes are MACed under (sealed with the master key). */
const OTP_MAC_KEY_ROW = 'otp-mac-key'

/** Most OTP records kept at once service-wide; expired ones are dropped first. */
export const MAX_OTP_RECORDS = 10_000
/** Most rate-limit buckets (contacts, client addresses) kept at once; idle ones are dropped first. */
export const MAX_RATE_BUCKETS = 20_000
/** An OTP record is kept this long after it expired (so a late guess still reads "expired"). */
const OTP_KEEP_AFTER_EXPIRY_MS = 10 * 60_000
const HOUR_MS = 3_600_000

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

/** Creates the service's sign-in key (verification tokens, service OIDC tokens) and OTP MAC secret once. */
export async function bootstrapSignInKey(tx: Transaction, service: Runtime): Promise<void> {
  if (!(await tx.get('pluginRows', OTP_MAC_KEY_ROW))) {
    const secret = globalThis.crypto.getRandomValues(new Uint8Array(32))
    const at = service.now()
    await tx.put('pluginRows', {
      id: OTP_MAC_KEY_ROW,
      kind: OTP_MAC_KEY_ROW,
      data: { sealedSecret: service.seal(secret) },
      createdAt: at,
      updatedAt: at,
    })
    secret.fill(0)
  }
  if (await tx.get('pluginRows', SIGN_IN_KEY_ROW)) return
  const key = p256.utils.randomSecretKey()
  const now = service.now()
  await tx.put('pluginRows', {
    id: SIGN_IN_KEY_ROW,
    kind: SIGN_IN_KEY_ROW,
    data: { sealedPrivateKey: service.seal(key), publicKey: bytesToHex(p256.getPublicKey(key, true)) },
    createdAt: now,
    updatedAt: now,
  })
  key.fill(0)
}

/** Reads the sign-in key and OTP secret rows once per process (they never change after bootstrap). */
export async function loadSignInKeys(service: Runtime): Promise<void> {
  for (const id of [SIGN_IN_KEY_ROW, OTP_MAC_KEY_ROW]) {
    const row = await service.store.get('pluginRows', id)
    if (!row) throw new Error(`${id} not bootstrapped`)
    service.cached.set(id, row.data)
  }
}

function signInKey(service: Runtime): { sealedPrivateKey: string; publicKey: string } {
  const data = service.cached.get(SIGN_IN_KEY_ROW)
  if (!data) throw new Error('sign-in key not loaded')
  return data as { sealedPrivateKey: string; publicKey: string }
}

/** HMAC-SHA256 under the OTP secret, opened for this one computation and wiped. */
function otpMac(service: Runtime): (message: string) => string {
  return (message) => {
    const data = service.cached.get(OTP_MAC_KEY_ROW) as { sealedSecret: string } | undefined
    if (!data) throw new Error('OTP secret not loaded')
    const secret = service.open(data.sealedSecret)
    try {
      return bytesToHex(hmac(sha256, secret, utf8ToBytes(message)))
    } finally {
      secret.fill(0)
    }
  }
}

/** Row id of a rate-limit bucket: the key (a contact, an address) is hashed so rows stay small. */
const bucketRowId = (key: string) => `otp-limit:${bytesToHex(sha256(utf8ToBytes(key)))}`

const full = (what: string) =>
  new ApiError('RATE_LIMITED', `the service holds too many ${what}; try again later`, undefined, {
    retryAfterSeconds: 60,
  })

/**
 * OTP records and rate-limit buckets, in the database, each engine step in its own serializable
 * transaction (apart from the activity's, so a wrong code still counts though the activity
 * fails). Both kinds are capped: when a cap is reached, expired records and idle buckets are
 * deleted, and if it is still reached a new one is refused (429), so unauthenticated callers
 * cannot grow the database without bound.
 */
function otpStorage(service: Runtime): OtpStorage {
  const prune = async (tx: Transaction, kind: 'otp' | 'otp-limit') => {
    const at = service.now()
    for (const row of await tx.findBy('pluginRows', 'kind', kind)) {
      const stale =
        kind === 'otp'
          ? (row.data as unknown as OtpRecord).expiresAtMs + OTP_KEEP_AFTER_EXPIRY_MS < at
          : row.updatedAt + HOUR_MS < at
      if (stale) await tx.delete('pluginRows', row.id)
    }
  }
  // Expired rows are swept at most every 10 s per process (the caps are checked on every insert).
  const lastSweep = { otp: Number.NEGATIVE_INFINITY, 'otp-limit': Number.NEGATIVE_INFINITY }
  const room = async (tx: Transaction, kind: 'otp' | 'otp-limit', max: number, what: string) => {
    if (service.now() - lastSweep[kind] >= 10_000) {
      lastSweep[kind] = service.now()
      await prune(tx, kind)
    }
    if ((await tx.count('pluginRows', 'kind', kind)) < max) return
    await prune(tx, kind)
    if ((await tx.count('pluginRows', 'kind', kind)) >= max) throw full(what)
  }
  return {
    transaction: (fn) =>
      service.store.transaction((tx) =>
        fn({
          get: async (otpId) => {
            const row = await tx.get('pluginRows', `otp:${otpId}`)
            return row?.kind === 'otp' ? (row.data as unknown as OtpRecord) : undefined
          },
          put: async (record) => {
            const existing = await tx.get('pluginRows', `otp:${record.otpId}`)
            if (!existing) await room(tx, 'otp', MAX_OTP_RECORDS, 'pending one-time codes')
            const now = service.now()
            await tx.put('pluginRows', {
              id: `otp:${record.otpId}`,
              kind: 'otp',
              organizationId: record.organizationId,
              data: { ...record },
              createdAt: existing?.createdAt ?? now,
              updatedAt: now,
            })
          },
          getBucket: async (key) => {
            const row = await tx.get('pluginRows', bucketRowId(key))
            return row ? [...((row.data as { times: number[] }).times ?? [])] : []
          },
          putBucket: async (key, times) => {
            const id = bucketRowId(key)
            const existing = await tx.get('pluginRows', id)
            if (times.length === 0) {
              if (existing) await tx.delete('pluginRows', id)
              return
            }
            if (!existing) await room(tx, 'otp-limit', MAX_RATE_BUCKETS, 'rate-limit entries')
            const now = service.now()
            await tx.put('pluginRows', {
              id,
              kind: 'otp-limit',
              data: { times },
              createdAt: existing?.createdAt ?? now,
              updatedAt: now,
            })
          },
        }),
      ),
  }
}

export function signInState(service: Runtime): SignInState {
  let state = states.get(service)
  if (state) return state
  const now = () => service.now()
  // Dev surfaces answer loopback clients and allowed origins only (never `Access-Control-Allow-Origin: *`).
  const outbox = createOutbox({
    guard: localOnly(service, { methods: ['GET', 'DELETE'], headers: ['Accept'] }),
  })
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
      mac: otpMac(service),
    }),
    devIdp: createDevIdp({
      now,
      guard: localOnly(service, { methods: ['GET', 'POST'], headers: ['Content-Type', 'Accept'] }),
    }),
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

/**
 * Verifies an OTP verification token (signature by the sign-in key, expiry, claims) for use in
 * `organization`: a token is accepted only in the organization that minted it and in that
 * organization's sub-organizations (a token minted by the auth proxy of a parent logs in to its
 * sub-organizations; one minted inside a sub-organization works nowhere else).
 */
export async function verifyVerificationToken(
  service: Runtime,
  token: unknown,
  field: string,
  organization: Pick<OrganizationRow, 'id' | 'parentOrganizationId'>,
): Promise<VerificationTokenClaims> {
  if (typeof token !== 'string')
    throw new ApiError('VERIFICATION_TOKEN_INVALID', `${field} must be a verification token`, field)
  let claims: Partial<VerificationTokenClaims>
  try {
    claims = verifyJwt(
      token,
      hexToBytes((await signInKey(service)).publicKey),
      Math.floor(service.now() / 1000),
    )
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
  const minted = claims.organization_id
  if (
    typeof minted !== 'string' ||
    (minted !== organization.id && minted !== organization.parentOrganizationId)
  )
    throw new ApiError(
      'VERIFICATION_TOKEN_INVALID',
      `${field} was issued for another organization; verify a code here`,
      field,
    )
  return claims as VerificationTokenClaims
}

/**
 * Marks a single-use token (verification token id, OIDC `jti`) spent inside `tx`, so it counts
 * only if the login that spends it commits. Throws `errorCode` when it was spent before.
 */
export async function spendOnce(
  ctx: { tx: Transaction; now: number },
  kind: 'verification-token' | 'verification-token-signup' | 'oidc-token' | 'settings-request',
  id: string,
  error: {
    errorCode: 'VERIFICATION_TOKEN_INVALID' | 'OIDC_TOKEN_REPLAYED' | 'ALREADY_EXISTS' | 'STAMP_INVALID'
    message: string
    field?: string
  },
): Promise<void> {
  const rowId = `${kind}:${id}`
  if (await ctx.tx.get('pluginRows', rowId)) throw new ApiError(error.errorCode, error.message, error.field)
  await ctx.tx.put('pluginRows', { id: rowId, kind, data: {}, createdAt: ctx.now, updatedAt: ctx.now })
}

/** The proxy configuration of an organization, or of its parent for a sub-organization. */
export async function proxyConfigFor(
  reads: Reads,
  organizationId: string,
): Promise<ProxyConfigRow | undefined> {
  const own = (await reads.findBy('proxyConfigs', 'organizationId', organizationId))[0]
  if (own) return own
  const parent = (await reads.get('organizations', organizationId))?.parentOrganizationId
  return parent ? (await reads.findBy('proxyConfigs', 'organizationId', parent))[0] : undefined
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
