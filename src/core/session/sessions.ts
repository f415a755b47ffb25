import { decodeJwtClaims, type SessionClaims } from '@latchkey/protocol'
import { LatchkeyError, NotSignedInError, SessionExpiredError } from '../errors.ts'
import type { Latchkey } from '../types.ts'
import { activateSession, putSession } from './createSessionStore.ts'
import { sessionStatusOf, usableSession } from './selectors.ts'
import type { ClientStatus } from './sessionMachine.ts'
import { isUsable } from './sessionMachine.ts'
import type { Session, SignInMethodUsed } from './types.ts'

const newId = () => crypto.randomUUID()

/** Records a session from a login's JWT and makes it active (unless `activate: false`). */
export function addSessionFromJwt(
  client: Latchkey,
  parameters: { session: string; method: SignInMethodUsed; label?: string | undefined; activate?: boolean },
): Session {
  let claims: SessionClaims
  try {
    claims = decodeJwtClaims<SessionClaims>(parameters.session)
  } catch (error) {
    throw new LatchkeyError('The service returned a session that is not a JWT', {
      code: 'SESSION_INVALID',
      cause: error,
    })
  }
  const now = Date.now()
  const expiresAt = claims.exp * 1000
  const session: Session = {
    id: newId(),
    sessionType: claims.session_type,
    userId: claims.user_id,
    organizationId: claims.organization_id,
    publicKey: claims.public_key || undefined,
    expiresAt,
    createdAt: now,
    lifetimeSeconds: Math.max(1, Math.round((expiresAt - (claims.iat ? claims.iat * 1000 : now)) / 1000)),
    method: parameters.method,
    label: parameters.label,
    status: expiresAt > now ? 'active' : 'expired',
  }
  if (session.sessionType === 'SESSION_TYPE_READ_ONLY') client.tokens.set(session.id, parameters.session)
  putSession(client.store, session, parameters.activate ?? true)
  return session
}

/** Records a session whose key was registered directly (passkey or wallet sign-up). */
export function addSessionFromKey(
  client: Latchkey,
  parameters: {
    publicKey: string
    userId: string
    organizationId: string
    lifetimeSeconds: number
    method: SignInMethodUsed
    label?: string | undefined
  },
): Session {
  const now = Date.now()
  const session: Session = {
    id: newId(),
    sessionType: 'SESSION_TYPE_READ_WRITE',
    userId: parameters.userId,
    organizationId: parameters.organizationId,
    publicKey: parameters.publicKey,
    expiresAt: now + parameters.lifetimeSeconds * 1000,
    createdAt: now,
    lifetimeSeconds: parameters.lifetimeSeconds,
    method: parameters.method,
    label: parameters.label,
    status: 'active',
  }
  putSession(client.store, session, true)
  return session
}

/** The active session whatever its status (an expired one included); see `getSession`. */
export const getActiveSession = (client: Latchkey): Session | undefined => {
  const { activeId, sessions } = client.store.getState()
  return activeId ? sessions[activeId] : undefined
}

export type GetSessionParameters = {
  /** Read this session instead of the active one. */
  sessionId?: string | undefined
}

/**
 * The active (or given) session while it can sign: `undefined` once it has expired or lost its
 * key, as when signed out. `getSessionStatus` says which.
 */
export function getSession(client: Latchkey, parameters: GetSessionParameters = {}): Session | undefined {
  return usableSession(client.store.getState(), parameters.sessionId)
}

/**
 * `signed-out`, `active`, `expiring`, `expired` or `storage-lost`: the active (or given) session's
 * status. The session timers move it to `expired` at the expiry instant.
 */
export function getSessionStatus(client: Latchkey, parameters: GetSessionParameters = {}): ClientStatus {
  return sessionStatusOf(client.store.getState(), parameters.sessionId)
}

/** The session to act with: the given one or the active one, and usable; else a typed error. */
export function requireSession(client: Latchkey, sessionId?: string): Session {
  const session = sessionId ? client.store.getState().sessions[sessionId] : getActiveSession(client)
  if (!session) throw new NotSignedInError()
  if (session.status === 'storage-lost')
    throw new NotSignedInError('The session key was lost from this browser’s storage; sign in again')
  if (!isUsable(session.status)) throw new SessionExpiredError(session.id)
  return session
}

export type SwitchSessionParameters = { sessionId: string }

/** Makes another signed-in session the active one. */
export function switchSession(client: Latchkey, { sessionId }: SwitchSessionParameters): Session {
  const session = client.store.getState().sessions[sessionId]
  if (!session) throw new NotSignedInError(`No session ${sessionId}`)
  activateSession(client.store, sessionId)
  return session
}
