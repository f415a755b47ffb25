import {
  CLIENT_SIGNATURE_SCHEME,
  type ClientSignature,
  type VerificationTokenClaims,
} from '@latchkey/protocol'
import { CredentialError } from '../../kernel/base/errors.ts'
import type { Reader } from '../../kernel/Reader.ts'
import { verifyClientSignature } from '../otp/verifyClientSignature.ts'

/** `clientSignature` in either form: the seed's hex signature over the token, or the published object. */
export type ClientSignatureInput = string | ClientSignature

const HEX_SIGNATURE = { max: 300, pattern: /^(0x)?[0-9a-fA-F]+$/, hint: 'hex (raw r‖s or DER)' }

/** Reads `clientSignature` (hex string or `{ message, publicKey, scheme, signature }`) if present. */
export function readClientSignature(r: Reader, name = 'clientSignature'): ClientSignatureInput | undefined {
  if (!r.has(name)) return undefined
  if (typeof r.value[name] === 'string') return r.string(name, HEX_SIGNATURE)
  const o = r.object(name)
  return {
    message: o.string('message', { max: 16_384 }),
    publicKey: o.string('publicKey', { max: 200 }).toLowerCase(),
    scheme: o.enum('scheme', [CLIENT_SIGNATURE_SCHEME] as const),
    signature: o.string('signature', HEX_SIGNATURE),
  }
}

const invalid = (message: string, field: string) =>
  new CredentialError({ code: 'CLIENT_SIGNATURE_INVALID', field, message })

/**
 * The bound key's signed consent: checks the object's key is the one bound at `otp_verify`,
 * its signature over `message`, and returns the parsed message naming `tokenId` and `type`.
 */
export function signedMessage(
  signature: ClientSignature,
  claims: VerificationTokenClaims & { public_key: string },
  type: 'USAGE_TYPE_LOGIN' | 'USAGE_TYPE_SIGNUP',
  field: string,
): Record<string, unknown> {
  if (signature.publicKey !== claims.public_key)
    throw invalid(`${field}.publicKey must be the key given at otp_verify`, `${field}.publicKey`)
  if (!verifyClientSignature(signature.signature, signature.message, claims.public_key))
    throw invalid(
      `${field}.signature is not a signature of ${field}.message by the key given at otp_verify`,
      `${field}.signature`,
    )
  let message: unknown
  try {
    message = JSON.parse(signature.message)
  } catch {
    throw invalid(`${field}.message must be JSON`, `${field}.message`)
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message))
    throw invalid(`${field}.message must be a JSON object`, `${field}.message`)
  const record = message as Record<string, unknown>
  if (record.type !== type) throw invalid(`${field}.message must be a ${type} message`, `${field}.message`)
  if (record.tokenId !== claims.id)
    throw invalid(`${field}.message names another verification token`, `${field}.message`)
  return record
}

/** The seed's form: a hex signature over the token text by the bound key. */
export function requireTokenSignature(
  signature: string,
  token: string,
  publicKey: string,
  field: string,
): void {
  if (!verifyClientSignature(signature, token, publicKey))
    throw invalid(
      `${field} is not a signature of the verification token by the key given at otp_verify`,
      field,
    )
}

function requireBoundSignature(
  signature: ClientSignatureInput | undefined,
  claims: VerificationTokenClaims,
  field: string,
): asserts claims is VerificationTokenClaims & { public_key: string } {
  if (claims.public_key && signature === undefined)
    throw invalid(`${field} is required: the verification token is bound to a public key`, field)
}

/**
 * The login rule: a session goes only to a key that proved possession. Either the session key
 * is the key bound at `otp_verify` and `signature` is the seed's hex signature over the token by
 * it, or `signature` is the published object whose message
 * `{"login":{"publicKey":<session key>},"tokenId":<token id>,"type":"USAGE_TYPE_LOGIN"}` the bound
 * key signed. A token bound to no key (the seed's optional `public_key`) needs no signature.
 */
export function checkLoginSignature(input: {
  signature: ClientSignatureInput | undefined
  token: string
  claims: VerificationTokenClaims
  sessionPublicKey: string
  field: string
  publicKeyField: string
}): void {
  const { signature, claims, field } = input
  if (!claims.public_key) return
  requireBoundSignature(signature, claims, field)
  if (typeof signature === 'string') {
    requireTokenSignature(signature, input.token, claims.public_key, field)
    if (input.sessionPublicKey !== claims.public_key)
      throw invalid(
        `${input.publicKeyField} must be the key given at otp_verify when ${field} signs the token; sign a USAGE_TYPE_LOGIN message naming another session key`,
        input.publicKeyField,
      )
    return
  }
  const message = signedMessage(signature!, claims, 'USAGE_TYPE_LOGIN', field)
  const login = message.login as { publicKey?: unknown } | undefined
  if (typeof login?.publicKey !== 'string' || login.publicKey.toLowerCase() !== input.sessionPublicKey)
    throw invalid(
      `${field}.message names another session key than ${input.publicKeyField}`,
      `${field}.message`,
    )
}

/** JSON with sorted object keys, so two spellings of one value compare equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`
  return JSON.stringify(value)
}

/**
 * The sign-up rule: with a token bound to a key, the new account's credentials are the ones that
 * key consented to. `signature` is the published object whose message
 * `{"signupV2":{apiKeys,authenticators,oauthProviders,email|phoneNumber},"tokenId",…,"type":"USAGE_TYPE_SIGNUP"}`
 * lists exactly the request's; or the seed's hex signature over the token, when every API key
 * of the sign-up is the bound key itself.
 */
export function checkSignupSignature(input: {
  signature: ClientSignatureInput | undefined
  token: string
  claims: VerificationTokenClaims
  body: {
    apiKeys: unknown[]
    authenticators: unknown[]
    oauthProviders: unknown[]
    userEmail?: string
    userPhoneNumber?: string
  }
  field: string
}): void {
  const { signature, claims, field, body } = input
  if (!claims.public_key) return
  requireBoundSignature(signature, claims, field)
  if (typeof signature === 'string') {
    requireTokenSignature(signature, input.token, claims.public_key, field)
    const others = body.apiKeys.filter(
      (key) => (key as { publicKey?: unknown }).publicKey !== claims.public_key,
    )
    if (others.length > 0 || body.authenticators.length > 0 || body.oauthProviders.length > 0)
      throw invalid(
        `${field} over the token only allows the key given at otp_verify; sign a USAGE_TYPE_SIGNUP message listing the other credentials`,
        field,
      )
    return
  }
  const message = signedMessage(signature!, claims, 'USAGE_TYPE_SIGNUP', field)
  // `signupV2` from @turnkey/core 2.x, `signup` from 1.x: the same fields.
  const usage = (message.signupV2 ?? message.signup ?? {}) as Record<string, unknown>
  const pairs: [string, unknown, unknown][] = [
    ['apiKeys', usage.apiKeys ?? [], body.apiKeys],
    ['authenticators', usage.authenticators ?? [], body.authenticators],
    ['oauthProviders', usage.oauthProviders ?? [], body.oauthProviders],
    ['email', usage.email, body.userEmail],
    ['phoneNumber', usage.phoneNumber, body.userPhoneNumber],
  ]
  for (const [name, signed, sent] of pairs) {
    const a = typeof signed === 'string' ? signed.trim().toLowerCase() : signed
    const b = typeof sent === 'string' ? sent.trim().toLowerCase() : sent
    if (canonical(a) !== canonical(b))
      throw invalid(
        `${field}.message does not list this sign-up's ${name}: the key given at otp_verify did not consent to it`,
        `${field}.message`,
      )
  }
}
