// Hex, UTF-8 and base64url in a few lines over the platform (TextEncoder, btoa/atob): the start-up
// bundle needs them for session keys, and a codec library would cost more than the lines.

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

/** UTF-8 bytes of a string. */
export function utf8ToBytes(text: string): Uint8Array {
  if (typeof text !== 'string') throw new TypeError('string expected')
  return new TextEncoder().encode(text)
}

/** Base64url without padding. */
export function toBase64Url(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** Bytes of base64url text (trailing `=` allowed); throws on other letters or a non-canonical ending. */
export function fromBase64Url(text: string): Uint8Array {
  const bare = text.replace(/=+$/, '')
  if (!/^[A-Za-z0-9_-]*$/.test(bare) || bare.length % 4 === 1) throw new TypeError('invalid base64url text')
  const binary = atob(bare.replace(/-/g, '+').replace(/_/g, '/'))
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  // atob ignores bits past the last byte; a strict decoder refuses text whose unused bits are set.
  if (toBase64Url(bytes) !== bare) throw new TypeError('invalid base64url text: non-zero padding bits')
  return bytes
}

/** Random bytes from the platform CSPRNG. */
export const randomBytes = (length: number): Uint8Array => crypto.getRandomValues(new Uint8Array(length))

/** Lowercase hex SHA-256 through WebCrypto (async, no hashing code in the bundle). */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === 'string' ? utf8ToBytes(data) : data
  return bytesToHex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)))
}
