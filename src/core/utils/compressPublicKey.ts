import { bytesToHex } from './hex.ts'

/** Compressed (33-byte) hex of an uncompressed (65-byte, 0x04-prefixed) EC public key. */
export function compressPublicKey(uncompressed: Uint8Array): string {
  if (uncompressed.length !== 65 || uncompressed[0] !== 4)
    throw new Error('expected a 65-byte uncompressed key')
  const y = uncompressed[64] as number
  return `${y & 1 ? '03' : '02'}${bytesToHex(uncompressed.subarray(1, 33))}`
}
