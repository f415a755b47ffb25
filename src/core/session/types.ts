import type { SessionType } from '@latchkey/protocol'
import type { ClientStatus, SessionStatus } from './sessionMachine.ts'

export type SignInMethodUsed = 'otp' | 'oauth' | 'passkey' | 'wallet' | 'read-only' | 'api-key'

/** One signed-in session. Only metadata: the private key stays in the key store. */
export interface Session {
  /** Local id (stable across refreshes). */
  id: string
  sessionType: SessionType
  userId: string
  organizationId: string
  /** Compressed P-256 hex of the session key; absent for read-only sessions. */
  publicKey: string | undefined
  /** Epoch ms. */
  expiresAt: number
  /** Epoch ms. */
  createdAt: number
  /** Lifetime asked for at login, reused by refreshes. */
  lifetimeSeconds: number
  method: SignInMethodUsed
  /** What the person signed in with (e-mail, phone, provider, wallet address), for display. */
  label?: string | undefined
  status: SessionStatus
}

export interface SessionState {
  /** Status of the active session, or `signed-out`. */
  status: ClientStatus
  activeId: string | null
  sessions: Record<string, Session>
  /** True once persisted sessions were read (always true where there is no storage). */
  hydrated: boolean
}

/**
 * Read-only session JWTs are bearer tokens, so they live in memory only, keyed by session id;
 * they are never persisted.
 */
export type SessionTokens = Map<string, string>
