// Loaded lazily: only wallet sign-in needs secp256k1 on the client.
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '../utils/encoding.ts'

/** keccak256 of the EIP-191 `personal_sign` envelope of a message. */
export function eip191Hash(message: Uint8Array): Uint8Array {
  const prefix = utf8ToBytes(`\x19Ethereum Signed Message:\n${message.length}`)
  const data = new Uint8Array(prefix.length + message.length)
  data.set(prefix)
  data.set(message, prefix.length)
  return keccak_256(data)
}

/** Compressed secp256k1 public key (hex) that made a 65-byte r‖s‖v `personal_sign` signature. */
export function recoverEip191PublicKey(message: Uint8Array, signatureHex: string): string {
  const bytes = hexToBytes(signatureHex.replace(/^0x/, ''))
  if (bytes.length !== 65) throw new Error('expected a 65-byte r‖s‖v signature')
  const v = bytes[64] as number
  const recovery = v >= 27 ? v - 27 : v
  const signature = secp256k1.Signature.fromBytes(bytes.subarray(0, 64), 'compact').addRecoveryBit(recovery)
  return bytesToHex(signature.recoverPublicKey(eip191Hash(message)).toBytes(true))
}

/** Ethereum address (checksum-free lowercase) of a compressed secp256k1 public key. */
export function ethereumAddressOf(compressedPublicKeyHex: string): string {
  const point = secp256k1.Point.fromHex(compressedPublicKeyHex)
  return `0x${bytesToHex(keccak_256(point.toBytes(false).subarray(1)).subarray(12))}`
}
