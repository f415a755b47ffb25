import {
  type AccountSpec,
  ADDRESS_FORMATS,
  API_KEY_CURVES,
  type ApiKeyCurve,
  type ApiKeyParams,
  AUTHENTICATOR_TRANSPORTS,
  type AuthenticatorParams,
  CURVES,
  MNEMONIC_LENGTHS,
  type OauthProviderParams,
  type OauthProviderParamsV2,
  PATH_FORMATS,
  type RootUserParams,
  type WalletParams,
} from '@latchkey/protocol'
import { ed25519 } from '@noble/curves/ed25519.js'
import { p256 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { FieldError } from '../kernel/base/errors.ts'
import { CryptoInputError, parsePath, validateAccountSpec } from '../kernel/crypto/index.ts'
import { EMAIL_ADDRESS, EMAIL_ADDRESS_HINT } from '../kernel/emailAddress.ts'
import { Reader } from '../kernel/Reader.ts'

/** Largest number of accounts one activity derives. */
export const MAX_ACCOUNTS = 100

/** Re-throws a CryptoInputError from `fn` as a 400 naming `${prefix}.${field}`. */
export function withField<T>(prefix: string, fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    if (error instanceof CryptoInputError)
      throw new FieldError({
        field: error.field ? `${prefix}.${error.field}` : prefix,
        message: error.message,
      })
    throw error
  }
}

export function readAccountSpec(value: unknown, field: string): AccountSpec {
  const r = new Reader(value, field)
  const spec: AccountSpec = {
    curve: r.enum('curve', CURVES),
    pathFormat: r.enum('pathFormat', PATH_FORMATS),
    path: r.string('path', { max: 256 }),
    addressFormat: r.enum('addressFormat', ADDRESS_FORMATS),
  }
  withField(field, () => validateAccountSpec(spec))
  return spec
}

/**
 * Non-hardened levels the secp256k1 accounts of one request may have in all: each costs a point
 * multiplication on the thread that derives it. Three an account at `MAX_ACCOUNTS`: 100 BIP-44
 * accounts (`m/44'/60'/0'/0/i`, two each) fit, 100 accounts with deep paths do not.
 */
export const MAX_UNHARDENED_LEVELS = MAX_ACCOUNTS * 3

export function readAccounts(r: Reader, name = 'accounts', min = 0): AccountSpec[] {
  const accounts = r.array(name, readAccountSpec, { min, max: MAX_ACCOUNTS })
  let levels = 0
  for (const account of accounts)
    if (account.curve === 'CURVE_SECP256K1')
      levels += parsePath(account.path).filter((segment) => !segment.hardened).length
  if (levels > MAX_UNHARDENED_LEVELS)
    throw new FieldError({
      field: r.field(name),
      reason: `the accounts' paths have ${levels} non-hardened levels in all, more than ${MAX_UNHARDENED_LEVELS}: each costs the service a point multiplication to derive; ask for fewer accounts or shallower paths`,
    })
  return accounts
}

export function readMnemonicLength(r: Reader): number {
  return r.optInt('mnemonicLength', { oneOf: MNEMONIC_LENGTHS }) ?? 12
}

export function readWalletParams(r: Reader): WalletParams {
  return {
    walletName: r.string('walletName', { max: 256 }),
    accounts: readAccounts(r),
    mnemonicLength: readMnemonicLength(r),
  }
}

/**
 * Normalises an API public key to the form stamps carry: compressed hex for P-256 and
 * secp256k1 (uncompressed input is accepted and compressed), 32-byte hex for ed25519.
 */
export function normalizeApiPublicKey(publicKey: string, curve: ApiKeyCurve, field: string): string {
  const hex = publicKey.toLowerCase().replace(/^0x/, '')
  try {
    if (!/^[0-9a-f]+$/.test(hex)) throw new Error('not hex')
    const bytes = hexToBytes(hex)
    if (curve === 'API_KEY_CURVE_ED25519') {
      if (bytes.length !== 32) throw new Error('ed25519 keys are 32 bytes')
      ed25519.Point.fromBytes(bytes)
      return hex
    }
    const curveImpl = curve === 'API_KEY_CURVE_P256' ? p256 : secp256k1
    return bytesToHex(curveImpl.Point.fromBytes(bytes).toBytes(true))
  } catch (error) {
    throw new FieldError({
      field,
      reason: `is not a valid ${curve.replace('API_KEY_CURVE_', '')} public key (${(error as Error).message})`,
    })
  }
}

/** Longest API key lifetime: 10 years. */
const MAX_EXPIRATION_SECONDS = 10 * 365 * 24 * 3600

export function readApiKeyParams(value: unknown, field: string): ApiKeyParams {
  const r = new Reader(value, field)
  const curveType = r.enum('curveType', API_KEY_CURVES)
  const expirationSeconds = r.optUintString('expirationSeconds', { max: MAX_EXPIRATION_SECONDS })
  if (expirationSeconds === '0')
    throw new FieldError({ field: `${field}.expirationSeconds`, reason: 'must be positive' })
  return {
    apiKeyName: r.string('apiKeyName', { max: 256 }),
    publicKey: normalizeApiPublicKey(r.string('publicKey', { max: 200 }), curveType, r.field('publicKey')),
    curveType,
    ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
  }
}

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/

/**
 * The longest credential id WebAuthn allows (1,023 bytes), as base64url text (padded or not). The
 * id is an indexed column, and a longer one the caller made up (a "none" attestation signs
 * nothing) is past what a PostgreSQL index entry holds (2,704 bytes): refused here, naming it.
 */
export const MAX_CREDENTIAL_ID_CHARS = 1364

/**
 * The longest COSE public key a passkey registers (an RSA-4096 key takes about 530 bytes): its
 * hex (`AuthenticatorRow.publicKeyHex`) is an indexed column too.
 */
export const MAX_COSE_KEY_BYTES = 1024

export function readAuthenticatorParams(value: unknown, field: string): AuthenticatorParams {
  const r = new Reader(value, field)
  const attestation = r.object('attestation')
  const b64 = (name: string, max = 32 * 1024) =>
    attestation.string(name, { pattern: BASE64URL, hint: 'base64url text', max })
  return {
    authenticatorName: r.string('authenticatorName', { max: 256 }),
    challenge: r.string('challenge', { max: 1024 }),
    attestation: {
      credentialId: b64('credentialId', MAX_CREDENTIAL_ID_CHARS),
      clientDataJson: b64('clientDataJson'),
      attestationObject: b64('attestationObject'),
      transports: attestation.array('transports', transportItem, { max: 5 }),
    },
  }
}

function transportItem(item: unknown, field: string) {
  if (!(AUTHENTICATOR_TRANSPORTS as readonly unknown[]).includes(item))
    throw new FieldError({
      code: 'ENUM_INVALID',
      field,
      reason: `must be one of ${AUTHENTICATOR_TRANSPORTS.join(', ')}`,
    })
  return item as AuthenticatorParams['attestation']['transports'][number]
}

/**
 * Refuses the fields of another version of the activity than `type` (a client mixing shapes would
 * otherwise see them silently ignored): 400 naming the first one present.
 */
export function refuseFields(r: Reader, names: readonly string[], type: string): void {
  for (const name of names)
    if (r.has(name)) throw new FieldError({ field: r.field(name), reason: `is not a field of ${type}` })
}

/** An OAuth provider of the versions that take only an `oidcToken`. */
export function readOauthProviderParams(value: unknown, field: string, type?: string): OauthProviderParams {
  const r = new Reader(value, field)
  if (type !== undefined) refuseFields(r, ['oidcClaims'], type)
  return {
    providerName: r.string('providerName', { max: 256 }),
    oidcToken: r.string('oidcToken', { max: 16 * 1024 }),
  }
}

/** An OAuth provider of the versions that take an `oidcToken` or `oidcClaims` (exactly one). */
export function readOauthProviderParamsV2(value: unknown, field: string): OauthProviderParamsV2 {
  const r = new Reader(value, field)
  const providerName = r.string('providerName', { max: 256 })
  const oidcToken = r.optString('oidcToken', { max: 16 * 1024 })
  const claims = r.optObject('oidcClaims')
  if (oidcToken === undefined && claims === undefined)
    throw new FieldError({
      code: 'FIELD_REQUIRED',
      field: `${field}.oidcToken`,
      message: `${field} needs an oidcToken or oidcClaims`,
    })
  if (oidcToken !== undefined && claims !== undefined)
    throw new FieldError({
      field: `${field}.oidcClaims`,
      message: `${field} takes an oidcToken or oidcClaims, not both`,
    })
  return {
    providerName,
    ...(oidcToken !== undefined ? { oidcToken } : {}),
    ...(claims !== undefined
      ? {
          oidcClaims: {
            iss: claims.string('iss', { max: 512 }),
            sub: claims.string('sub', { max: 512 }),
            aud: claims.string('aud', { max: 512 }),
          },
        }
      : {}),
  }
}

const E164 = /^\+[1-9]\d{6,14}$/

/**
 * A root user (or, with `userTags`, a user) of `type`: its `oauthProviders` take `oidcClaims` in
 * the versions that have them (`oidcClaims: true`) and refuse them in the others.
 */
export function readRootUser(
  value: unknown,
  field: string,
  version: { type: string; oidcClaims: boolean },
): RootUserParams {
  const r = new Reader(value, field)
  const userEmail = r.optString('userEmail', { max: 320, pattern: EMAIL_ADDRESS, hint: EMAIL_ADDRESS_HINT })
  const userPhoneNumber = r.optString('userPhoneNumber', {
    max: 16,
    pattern: E164,
    hint: 'an E.164 phone number (+15551234567)',
  })
  return {
    userName: r.string('userName', { max: 256 }),
    ...(userEmail !== undefined ? { userEmail: userEmail.toLowerCase() } : {}),
    ...(userPhoneNumber !== undefined ? { userPhoneNumber } : {}),
    apiKeys: r.array('apiKeys', readApiKeyParams, { max: 10 }),
    authenticators: r.array('authenticators', readAuthenticatorParams, { max: 10 }),
    oauthProviders: r.array(
      'oauthProviders',
      version.oidcClaims
        ? readOauthProviderParamsV2
        : (item, itemField) => readOauthProviderParams(item, itemField, version.type),
      { max: 10 },
    ),
  }
}
