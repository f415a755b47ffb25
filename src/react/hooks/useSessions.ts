import type { Session } from '../../core/session/types.ts'
import type { ClientParameter } from './internal.ts'
import { useSessionState } from './useSessionState.ts'

/** Every session of this client, keyed by id (the record object changes only when a session does). */
export function useSessions(parameters: ClientParameter = {}): Record<string, Session> {
  return useSessionState((state) => state.sessions, parameters)
}
