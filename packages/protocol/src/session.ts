import { base64urlnopad } from '@scure/base'
import type { SessionType } from './enums.ts'

/** Claims of a session JWT (ES256, signed by the service's session key). */
export interface SessionClaims {
  /** Expiry, epoch seconds. */
  exp: number
  /** Compressed P-256 public key hex of the session key; empty for read-only sessions. */
  public_key: string
  session_type: SessionType
  user_id: string
  organization_id: string
  iat?: number
  /**
   * A read-only session made by an API key (a login session's key): its id. The read-only session
   * ends with it (expired, deleted or logged out) and never outlasts it.
   */
  api_key_id?: string
  /**
   * A read-only session made by a passkey: the authenticator's id. The read-only session ends when
   * the passkey is removed from its user.
   */
  authenticator_id?: string
}

/** Claims of an OTP verification token (JWT). */
export interface VerificationTokenClaims {
  id: string
  verification_type: 'OTP_TYPE_EMAIL' | 'OTP_TYPE_SMS'
  contact: string
  public_key?: string
  /** Organization the token was minted in (the parent for proxy calls); accepted only there and in its sub-organizations. */
  organization_id?: string
  exp: number
}

/** Decodes a JWT's claims without verifying it (the client trusts the channel, not the token). */
export function decodeJwtClaims<T = Record<string, unknown>>(jwt: string): T {
  const part = jwt.split('.')[1]
  if (!part) throw new Error('not a JWT')
  return JSON.parse(new TextDecoder().decode(base64urlnopad.decode(part.replace(/=+$/, '')))) as T
}
