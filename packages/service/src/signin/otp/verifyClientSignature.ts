import { p256 } from '@noble/curves/nist.js'
import { hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'

/**
 * `client_signature` of `otp_login`: ECDSA-P256-SHA256 over the UTF-8 verification token by the
 * key bound at `otp_verify`, as raw r‖s hex (128 chars, what WebCrypto returns) or DER hex.
 */
export function verifyClientSignature(signatureHex: string, token: string, publicKeyHex: string): boolean {
  const hex = signatureHex.trim().toLowerCase().replace(/^0x/, '')
  if (!/^[0-9a-f]+$/.test(hex) || hex.length % 2 !== 0) return false
  const format = hex.length === 128 ? 'compact' : 'der'
  try {
    return p256.verify(hexToBytes(hex), utf8ToBytes(token), hexToBytes(publicKeyHex), {
      prehash: true,
      format,
      // WebCrypto does not normalise s; both halves of the curve are valid signatures here.
      lowS: false,
    })
  } catch {
    return false
  }
}
