import { utf8ToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'

export const ATTESTED_STAMP_SCHEMES = [
  'STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN',
  'STAMP_ATTESTED_SCHEME_P256_OIDC',
] as const
export type AttestedStampScheme = (typeof ATTESTED_STAMP_SCHEMES)[number]

export const SIGNATURE_SCHEMES = [
  'SIGNATURE_SCHEME_TK_API_P256',
  'SIGNATURE_SCHEME_TK_API_SECP256K1',
  'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191',
  'SIGNATURE_SCHEME_TK_API_ED25519',
] as const
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number]

/** Decoded `X-Stamp` value. */
export interface ApiKeyStamp {
  /** P-256/secp256k1: compressed key hex (66 chars); ed25519: 32-byte key hex. */
  publicKey: string
  scheme: SignatureScheme
  /** P-256/secp256k1: DER hex; EIP-191: 65-byte r‖s‖v hex or DER; ed25519: 64-byte hex. */
  signature: string
}

/** Decoded `X-Stamp-WebAuthn` value (base64url fields). */
export interface WebAuthnStamp {
  authenticatorData: string
  clientDataJson: string
  credentialId: string
  signature: string
}

/** `X-Stamp` header value: base64url (no padding) of the JSON, keys in this order. */
export function encodeApiKeyStamp(stamp: ApiKeyStamp): string {
  const json = JSON.stringify({
    publicKey: stamp.publicKey,
    scheme: stamp.scheme,
    signature: stamp.signature,
  })
  return base64urlnopad.encode(utf8ToBytes(json))
}

/** Parses an `X-Stamp` header; throws `Error` with a reason when it is not one. */
export function decodeApiKeyStamp(header: string): ApiKeyStamp {
  const trimmed = header.trim().replace(/=+$/, '')
  const json = new TextDecoder().decode(base64urlnopad.decode(trimmed))
  const value = JSON.parse(json) as Partial<ApiKeyStamp>
  if (typeof value.publicKey !== 'string' || typeof value.signature !== 'string')
    throw new Error('stamp needs publicKey and signature strings')
  if (!SIGNATURE_SCHEMES.includes(value.scheme as SignatureScheme))
    throw new Error(`unknown stamp scheme ${String(value.scheme)}`)
  return value as ApiKeyStamp
}
