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
