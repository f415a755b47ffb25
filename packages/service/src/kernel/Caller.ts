import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, concatBytes, utf8ToBytes } from '@noble/hashes/utils.js'

/** Who sent a request, established by its stamp (or read-only session). */
export interface Caller {
  userId: string
  /** The caller's own organization (may be the parent of the one the request acts in). */
  organizationId: string
  credential: {
    kind: 'API_KEY' | 'WEBAUTHN' | 'READ_ONLY_SESSION'
    /** apiKeyId, authenticatorId, or the session's user id. */
    id: string
    publicKey: string
    scheme: string
    signature: string
    /** The session profile an API key (a session key) was issued under: its scope confines the caller. */
    sessionProfileId?: string
  }
  readOnly: boolean
}

/**
 * What a replay of a stamped request is known by: the key that signed it (its kind, scheme and
 * public key), not the row holding it now. A login with a key the user already has registers it
 * again under a new row, and a key can be deleted and added again: a signed request captured
 * before either is the same request after it, answered with what it did the first time, never run
 * again. A read-only session (which signs nothing) by its user.
 */
export const signerOf = ({ kind, scheme, publicKey, id }: Caller['credential']): string =>
  publicKey ? `${kind} ${scheme} ${publicKey.toLowerCase()}` : `${kind} ${id}`

/**
 * What a stamped request is known by when it is applied once (an activity, a settings update):
 * the exact bytes, the key that signed them (`signerOf`) and, for a caller that may repeat a
 * request on purpose (the auth proxy's own user), its nonce.
 */
export const requestFingerprint = (credential: Caller['credential'], bytes: Uint8Array, nonce = ''): string =>
  bytesToHex(sha256(concatBytes(utf8ToBytes(`${signerOf(credential)}\n${nonce ? `${nonce}\n` : ''}`), bytes)))
