import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'

/** The spec's OAuth nonce: lowercase hex SHA-256 of the UTF-8 text of the compressed public key hex. */
export function oidcNonce(publicKeyHex: string): string {
  return bytesToHex(sha256(utf8ToBytes(publicKeyHex)))
}
