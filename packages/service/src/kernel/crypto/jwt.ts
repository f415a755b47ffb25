import { p256 } from '@noble/curves/nist.js'
import { utf8ToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import { CryptoInputError } from './errors.ts'

const encodeJson = (value: unknown) => base64urlnopad.encode(utf8ToBytes(JSON.stringify(value)))

function decodeSegment(segment: string | undefined): Uint8Array {
  if (typeof segment !== 'string' || !/^[A-Za-z0-9_-]*$/.test(segment))
    throw new CryptoInputError('token is not a JWT (bad base64url segment)', 'token')
  try {
    return base64urlnopad.decode(segment)
  } catch {
    throw new CryptoInputError('token is not a JWT (bad base64url segment)', 'token')
  }
}

function decodeJson(segment: string | undefined): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(decodeSegment(segment)))
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>
  } catch (error) {
    if (error instanceof CryptoInputError) throw error
  }
  throw new CryptoInputError('token is not a JWT (segment is not a JSON object)', 'token')
}

/** Signs `claims` as an ES256 JWT (P-256, raw r‖s signature, base64url). */
export function signJwt(claims: object, privateKey: Uint8Array, kid?: string): string {
  const header = kid === undefined ? { alg: 'ES256', typ: 'JWT' } : { alg: 'ES256', typ: 'JWT', kid }
  const signingInput = `${encodeJson(header)}.${encodeJson(claims)}`
  const signature = p256.sign(utf8ToBytes(signingInput), privateKey, { prehash: true, format: 'compact' })
  return `${signingInput}.${base64urlnopad.encode(signature)}`
}

/**
 * Verifies an ES256 JWT against `publicKey` (33 or 65 bytes) and returns its claims. Throws
 * CryptoInputError on a malformed token, another alg, a bad signature, or `exp` at or before
 * `now` (epoch seconds; defaults to the clock).
 */
export function verifyJwt<T>(
  token: string,
  publicKey: Uint8Array,
  now: number = Math.floor(Date.now() / 1000),
): T {
  if (typeof token !== 'string') throw new CryptoInputError('token must be a string', 'token')
  const parts = token.split('.')
  if (parts.length !== 3) throw new CryptoInputError('token is not a JWT (needs three segments)', 'token')
  const [headerPart, claimsPart, signaturePart] = parts as [string, string, string]
  const header = decodeJson(headerPart)
  if (header.alg !== 'ES256') throw new CryptoInputError(`unsupported JWT alg ${String(header.alg)}`, 'token')
  const claims = decodeJson(claimsPart)
  const signature = decodeSegment(signaturePart)
  let valid = false
  try {
    valid =
      signature.length === 64 &&
      p256.verify(signature, utf8ToBytes(`${headerPart}.${claimsPart}`), publicKey, {
        prehash: true,
        lowS: false,
      })
  } catch {
    valid = false
  }
  if (!valid) throw new CryptoInputError('JWT signature is invalid', 'token')
  if (claims.exp !== undefined) {
    if (typeof claims.exp !== 'number') throw new CryptoInputError('JWT exp must be a number', 'token')
    if (claims.exp <= now) throw new CryptoInputError('JWT has expired', 'token')
  }
  return claims as T
}

/** Reads a JWT's claims without verifying it (for clients showing session metadata). */
export function decodeJwtClaims<T>(token: string): T {
  if (typeof token !== 'string') throw new CryptoInputError('token must be a string', 'token')
  const parts = token.split('.')
  if (parts.length !== 3) throw new CryptoInputError('token is not a JWT (needs three segments)', 'token')
  return decodeJson(parts[1]) as T
}

/** The JWK (RFC 7517) of a P-256 public key, for a JWKS endpoint. */
export function publicJwk(
  publicKey: Uint8Array,
  kid?: string,
): {
  kty: 'EC'
  crv: 'P-256'
  x: string
  y: string
  alg: 'ES256'
  use: 'sig'
  kid?: string
} {
  let uncompressed: Uint8Array
  try {
    uncompressed = p256.Point.fromBytes(publicKey).toBytes(false)
  } catch {
    throw new CryptoInputError('not a valid P-256 public key', 'publicKey')
  }
  const jwk = {
    kty: 'EC' as const,
    crv: 'P-256' as const,
    x: base64urlnopad.encode(uncompressed.subarray(1, 33)),
    y: base64urlnopad.encode(uncompressed.subarray(33)),
    alg: 'ES256' as const,
    use: 'sig' as const,
  }
  return kid === undefined ? jwk : { ...jwk, kid }
}
