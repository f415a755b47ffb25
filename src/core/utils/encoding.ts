// Hex, UTF-8 and base64url in a few lines over the platform (TextEncoder, btoa/atob): a codec
// library would cost more than the lines.

// Hex lives apart (hex.ts) so start-up code that only compresses a public key takes it alone.
import { bytesToHex } from './hex.ts'

export { bytesToHex, hexToBytes } from './hex.ts'

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
