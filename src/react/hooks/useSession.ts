import type { Session } from '../../core/session/types.ts'
import type { ClientParameter } from './internal.ts'
import { useSessionState } from './useSessionState.ts'

export type UseSessionParameters = ClientParameter & {
  /** Read this session instead of the active one. */
  sessionId?: string | undefined
}

/** The active (or given) session, `undefined` when signed out. Its `status` drives the UI. */
export function useSession(parameters: UseSessionParameters = {}): Session | undefined {
  const { sessionId } = parameters
  return useSessionState((state) => state.sessions[sessionId ?? state.activeId ?? ''], parameters)
}
