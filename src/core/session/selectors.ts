import { type ClientStatus, isUsable } from './sessionMachine.ts'
import type { Session, SessionState } from './types.ts'

// Selectors over a session state snapshot, shared by `getSession`/`getSessionStatus` and the
// React hooks. Apart from sessions.ts so the start-up bundle (the trigger reads them) takes no
// error classes or JWT decoding with them.

/** The active (or given) session if it can sign, else `undefined`; the stored object, never a copy. */
export function usableSession(state: SessionState, sessionId?: string | undefined): Session | undefined {
  const session = state.sessions[sessionId ?? state.activeId ?? '']
  return session && isUsable(session.status) ? session : undefined
}

/** The active (or given) session's status, `signed-out` without one. */
export function sessionStatusOf(state: SessionState, sessionId?: string | undefined): ClientStatus {
  return state.sessions[sessionId ?? state.activeId ?? '']?.status ?? 'signed-out'
}
