import { sha256 } from '@noble/hashes/sha2.js'
import { utf8ToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
export const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/
/** An S256 challenge is a base64url (no padding) SHA-256: 43 characters. */
export const CODE_CHALLENGE = /^[A-Za-z0-9\-_]{43}$/

/** RFC 7636 S256: base64url(SHA-256(ASCII(code_verifier))). */
export function s256Challenge(codeVerifier: string): string {
  return base64urlnopad.encode(sha256(utf8ToBytes(codeVerifier)))
}
