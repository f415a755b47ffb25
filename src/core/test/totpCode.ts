import { hmac } from '@noble/hashes/hmac.js'
import { sha1 } from '@noble/hashes/legacy.js'
import { base32nopad } from '@scure/base'

/** The 6-digit RFC 6238 code (SHA-1, 30 s) of a base32 secret at `nowMs`: what an authenticator app shows. */
export function totpCode(secretBase32: string, nowMs: number = Date.now()): string {
  const counter = new Uint8Array(8)
  new DataView(counter.buffer).setBigUint64(0, BigInt(Math.floor(nowMs / 30_000)))
  const mac = hmac(sha1, base32nopad.decode(secretBase32.replace(/=+$/, '').toUpperCase()), counter)
  const offset = mac[mac.length - 1]! & 0x0f
  const value = new DataView(mac.buffer, mac.byteOffset).getUint32(offset) & 0x7fffffff
  return String(value % 1_000_000).padStart(6, '0')
}

/** The secret in an `otpauth://` URI. */
export const secretOfUri = (uri: string): string => new URL(uri).searchParams.get('secret') ?? ''
