import { createStore, type StoreApi } from 'zustand/vanilla'
import { type SessionEvent, sessionTransition } from './sessionMachine.ts'
import type { Session, SessionState } from './types.ts'

export type SessionStore = StoreApi<SessionState>

export const initialSessionState = (): SessionState => ({
  status: 'signed-out',
  activeId: null,
  sessions: {},
  hydrated: false,
})

/** One vanilla store per client instance (never module-level: SSR and several clients stay apart). */
export const createSessionStore = (): SessionStore => createStore<SessionState>()(() => initialSessionState())

const statusOf = (sessions: Record<string, Session>, activeId: string | null) =>
  (activeId && sessions[activeId]?.status) || 'signed-out'

/** Applies an event (and optional changes) to one session through the state machine. */
export function dispatchSessionEvent(
  store: SessionStore,
  sessionId: string,
  event: SessionEvent,
  patch: Partial<Omit<Session, 'id' | 'status'>> = {},
): void {
  store.setState((state) => {
    const current = state.sessions[sessionId]
    if (!current) return state
    const status = sessionTransition(current.status, event)
    if (!status) return state
    const sessions = { ...state.sessions, [sessionId]: { ...current, ...patch, status } }
    return { ...state, sessions, status: statusOf(sessions, state.activeId) }
  })
}

export function putSession(store: SessionStore, session: Session, activate: boolean): void {
  store.setState((state) => {
    const sessions = { ...state.sessions, [session.id]: session }
    const activeId = activate || !state.activeId ? session.id : state.activeId
    return { ...state, sessions, activeId, status: statusOf(sessions, activeId) }
  })
}

export function deleteSession(store: SessionStore, sessionId: string): void {
  store.setState((state) => {
    if (!state.sessions[sessionId]) return state
    const { [sessionId]: _removed, ...sessions } = state.sessions
    // The most recent remaining session becomes active when the active one leaves.
    const activeId =
      state.activeId === sessionId
        ? (Object.values(sessions).sort((a, b) => b.createdAt - a.createdAt)[0]?.id ?? null)
        : state.activeId
    return { ...state, sessions, activeId, status: statusOf(sessions, activeId) }
  })
}

export function activateSession(store: SessionStore, sessionId: string): void {
  store.setState((state) =>
    state.sessions[sessionId]
      ? { ...state, activeId: sessionId, status: statusOf(state.sessions, sessionId) }
      : state,
  )
}
