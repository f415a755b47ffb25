import type { ApiKeyStamp, SignatureScheme } from '@latchkey/protocol'
import { encodeApiKeyStamp } from '@latchkey/protocol'
import { ed25519 } from '@noble/curves/ed25519.js'
import { p256 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { eip191Signer } from 'micro-eth-signer'
import { CryptoInputError } from './errors.ts'

const HEX = /^([0-9a-fA-F]{2})+$/
const hexOrUndefined = (value: unknown): Uint8Array | undefined =>
  typeof value === 'string' && HEX.test(value) ? hexToBytes(value.toLowerCase()) : undefined

/**
 * Lenient DER decoder for ECDSA signatures: SEQUENCE { INTEGER r, INTEGER s }, tolerating
 * non-minimal integers (extra leading zero bytes) that some wallet signers emit. Returns
 * undefined on anything else.
 */
export function parseDerSignatureLenient(der: Uint8Array): { r: bigint; s: bigint } | undefined {
  let offset = 0
  const readLength = (): number | undefined => {
    const first = der[offset++]
    if (first === undefined) return undefined
    if (first < 0x80) return first
    const count = first & 0x7f
    if (count === 0 || count > 2) return undefined
    let length = 0
    for (let i = 0; i < count; i++) {
      const byte = der[offset++]
      if (byte === undefined) return undefined
      length = (length << 8) | byte
    }
    return length
  }
  const readInteger = (): bigint | undefined => {
    if (der[offset++] !== 0x02) return undefined
    const length = readLength()
    if (length === undefined || length === 0 || offset + length > der.length) return undefined
    const bytes = der.subarray(offset, offset + length)
    offset += length
    if ((bytes[0] ?? 0) & 0x80) return undefined // negative
    return BigInt('0x' + bytesToHex(bytes))
  }
  if (der[offset++] !== 0x30) return undefined
  const total = readLength()
  if (total === undefined || offset + total !== der.length) return undefined
  const r = readInteger()
  const s = readInteger()
  if (r === undefined || s === undefined || offset !== der.length) return undefined
  return { r, s }
}

function compactFromDer(curve: typeof p256 | typeof secp256k1, der: Uint8Array): Uint8Array | undefined {
  const parsed = parseDerSignatureLenient(der)
  if (!parsed) return undefined
  try {
    return new curve.Signature(parsed.r, parsed.s).toBytes('compact')
  } catch {
    return undefined
  }
}

/** ECDSA over SHA-256(body), DER signature. High-S is accepted (WebCrypto and OpenSSL emit it). */
function verifyEcdsaSha256(
  curve: typeof p256 | typeof secp256k1,
  stamp: ApiKeyStamp,
  body: Uint8Array,
): boolean {
  const publicKey = hexOrUndefined(stamp.publicKey)
  const der = hexOrUndefined(stamp.signature)
  if (!publicKey || !der) return false
  const compact = compactFromDer(curve, der)
  if (!compact) return false
  return curve.verify(compact, body, publicKey, { prehash: true, lowS: false })
}

/** personal_sign: keccak256("\x19Ethereum Signed Message:\n" + len + body). */
function eip191Digest(body: Uint8Array): Uint8Array {
  return hexToBytes(eip191Signer.getHash(body).replace(/^0x/, ''))
}

function verifyEip191(stamp: ApiKeyStamp, body: Uint8Array): boolean {
  const publicKey = hexOrUndefined(stamp.publicKey)
  const signature = hexOrUndefined(stamp.signature)
  if (!publicKey || !signature) return false
  const expected = bytesToHex(secp256k1.Point.fromBytes(publicKey).toBytes(true))
  const digest = eip191Digest(body)
  if (signature.length === 65) {
    const v = signature[64]!
    const recovery = v === 27 || v === 28 ? v - 27 : v === 0 || v === 1 ? v : -1
    if (recovery < 0) return false
    const recovered = secp256k1.recoverPublicKey(
      concatBytes(new Uint8Array([recovery]), signature.subarray(0, 64)),
      digest,
      { prehash: false },
    )
    return bytesToHex(recovered) === expected
  }
  const compact = compactFromDer(secp256k1, signature)
  if (!compact) return false
  return secp256k1.verify(compact, digest, publicKey, { prehash: false, lowS: false })
}

/**
 * Verifies an `X-Stamp` against the exact request body bytes, for all four schemes
 * (the key's curve decides the scheme; see `@latchkey/protocol` `stamp.ts`). Never throws: garbage yields false.
 */
export function verifyApiKeyStamp(stamp: ApiKeyStamp, body: Uint8Array): boolean {
  try {
    if (!stamp || typeof stamp !== 'object' || !(body instanceof Uint8Array)) return false
    switch (stamp.scheme) {
      case 'SIGNATURE_SCHEME_TK_API_P256':
        return verifyEcdsaSha256(p256, stamp, body)
      case 'SIGNATURE_SCHEME_TK_API_SECP256K1':
        return verifyEcdsaSha256(secp256k1, stamp, body)
      case 'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191':
        return verifyEip191(stamp, body)
      case 'SIGNATURE_SCHEME_TK_API_ED25519': {
        const publicKey = hexOrUndefined(stamp.publicKey)
        const signature = hexOrUndefined(stamp.signature)
        if (publicKey?.length !== 32 || !signature || signature.length !== 64) return false
        return ed25519.verify(signature, body, publicKey)
      }
      default:
        return false
    }
  } catch {
    return false
  }
}

/** The public key a stamp of `scheme` carries for `privateKey` (hex, as in ApiKeyStamp.publicKey). */
export function stampPublicKey(scheme: SignatureScheme, privateKey: Uint8Array): string {
  switch (scheme) {
    case 'SIGNATURE_SCHEME_TK_API_P256':
      return bytesToHex(p256.getPublicKey(privateKey, true))
    case 'SIGNATURE_SCHEME_TK_API_SECP256K1':
    case 'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191':
      return bytesToHex(secp256k1.getPublicKey(privateKey, true))
    case 'SIGNATURE_SCHEME_TK_API_ED25519':
      return bytesToHex(ed25519.getPublicKey(privateKey))
    default:
      throw new CryptoInputError(`unknown stamp scheme ${String(scheme)}`, 'scheme')
  }
}

/** Signs `body` as an API key and returns the `X-Stamp` header value. */
export function signApiKeyStamp(
  body: string | Uint8Array,
  key: { scheme: SignatureScheme; privateKey: Uint8Array },
): string {
  const bytes = typeof body === 'string' ? utf8ToBytes(body) : body
  const { scheme, privateKey } = key
  const publicKey = stampPublicKey(scheme, privateKey)
  let signature: string
  switch (scheme) {
    case 'SIGNATURE_SCHEME_TK_API_P256':
      signature = bytesToHex(p256.sign(bytes, privateKey, { prehash: true, format: 'der' }))
      break
    case 'SIGNATURE_SCHEME_TK_API_SECP256K1':
      signature = bytesToHex(secp256k1.sign(bytes, privateKey, { prehash: true, format: 'der' }))
      break
    case 'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191': {
      // 65-byte r ‖ s ‖ v with v = 27/28, as wallets return from personal_sign.
      const recovered = secp256k1.sign(eip191Digest(bytes), privateKey, {
        prehash: false,
        format: 'recovered',
      })
      signature = bytesToHex(concatBytes(recovered.subarray(1), new Uint8Array([27 + recovered[0]!])))
      break
    }
    case 'SIGNATURE_SCHEME_TK_API_ED25519':
      signature = bytesToHex(ed25519.sign(bytes, privateKey))
      break
    default:
      throw new CryptoInputError(`unknown stamp scheme ${String(scheme)}`, 'scheme')
  }
  return encodeApiKeyStamp({ publicKey, scheme, signature })
}
