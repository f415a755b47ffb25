import { p256 } from '@noble/curves/nist.js'
import { CryptoInputError } from './errors.ts'

/** Compresses an uncompressed (65-byte) P-256 public key to 33 bytes. Accepts compressed input as-is. */
export function compressP256(publicKey: Uint8Array): Uint8Array {
  return pointOf(publicKey).toBytes(true)
}

/** Expands a compressed (33-byte) P-256 public key to 65 bytes. Accepts uncompressed input as-is. */
export function uncompressP256(publicKey: Uint8Array): Uint8Array {
  return pointOf(publicKey).toBytes(false)
}

/** A fresh random P-256 private key (32 bytes, in range). */
export function randomP256PrivateKey(): Uint8Array {
  return p256.utils.randomSecretKey()
}

/** The P-256 public key of `privateKey`, compressed (33 bytes) by default or uncompressed (65). */
export function p256PublicKey(privateKey: Uint8Array, compressed = true): Uint8Array {
  try {
    return p256.getPublicKey(privateKey, compressed)
  } catch {
    throw new CryptoInputError('not a valid P-256 private key', 'privateKey')
  }
}

function pointOf(publicKey: Uint8Array) {
  try {
    return p256.Point.fromBytes(publicKey)
  } catch {
    throw new CryptoInputError('not a valid P-256 public key', 'publicKey')
  }
}
