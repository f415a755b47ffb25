import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'

/**
 * WebAuthn challenge for a body: the ASCII text of the lowercase hex SHA-256 of the body bytes.
 * Kept out of `index.ts` so that SHA-256 loads only with the passkey path on the client.
 */
export function webAuthnChallengeOf(body: string | Uint8Array): string {
  return bytesToHex(sha256(typeof body === 'string' ? utf8ToBytes(body) : body))
}
