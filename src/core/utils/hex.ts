// Hex in a few lines (re-exported by encoding.ts): the start-up bundle needs it for session keys
// (compressPublicKey), the rest of encoding.ts only the code that signs and seals.

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

/** Lowercase hex of bytes. */
export function bytesToHex(bytes: Uint8Array): string {
  let hex = ''
  for (const byte of bytes) hex += HEX[byte]
  return hex
}

/** Bytes of an even-length hex string (either case); throws on anything else. */
export function hexToBytes(hex: string): Uint8Array {
  if (typeof hex !== 'string') throw new TypeError('hex string expected')
  if (hex.length % 2 !== 0)
    throw new TypeError(`hex string expected, got unpadded hex of length ${hex.length}`)
  const bytes = new Uint8Array(hex.length / 2)
  for (let i = 0; i < bytes.length; i++) {
    const pair = hex.slice(2 * i, 2 * i + 2)
    if (!/^[0-9a-fA-F]{2}$/.test(pair))
      throw new TypeError(
        `hex string expected, got non-hex character ${JSON.stringify(pair)} at index ${2 * i}`,
      )
    bytes[i] = Number.parseInt(pair, 16)
  }
  return bytes
}
