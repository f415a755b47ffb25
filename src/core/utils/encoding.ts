import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'

export { bytesToHex, hexToBytes, utf8ToBytes }

export const toBase64Url = (bytes: Uint8Array): string => base64urlnopad.encode(bytes)
export const fromBase64Url = (text: string): Uint8Array => base64urlnopad.decode(text.replace(/=+$/, ''))

/** Random bytes from the platform CSPRNG. */
export const randomBytes = (length: number): Uint8Array => crypto.getRandomValues(new Uint8Array(length))

/** Lowercase hex SHA-256 through WebCrypto (async, no hashing code in the bundle). */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === 'string' ? utf8ToBytes(data) : data
  return bytesToHex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)))
}
