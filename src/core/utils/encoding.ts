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

/** Base64 with padding. */
export function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/** Base64url without padding. */
export function toBase64Url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** The bytes of `parts`, one after another. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/** Random bytes from the platform CSPRNG. */
export const randomBytes = (length: number): Uint8Array => crypto.getRandomValues(new Uint8Array(length))

/** Lowercase hex SHA-256 through WebCrypto (async, no hashing code in the bundle). */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === 'string' ? utf8ToBytes(data) : data
  return bytesToHex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)))
}
