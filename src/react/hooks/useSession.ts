import { usableSession } from '../../core/session/selectors.ts'
import type { Session } from '../../core/session/types.ts'
import type { ClientParameter } from './internal.ts'
import { useSessionState } from './useSessionState.ts'

export type UseSessionParameters = ClientParameter & {
  /** Read this session instead of the active one. */
  sessionId?: string | undefined
}

/**
 * The active (or given) session while it can sign; `undefined` when signed out and, at the
 * instant it expires (or its key is lost), when it has ended. `useSessionStatus()` tells which
 * (`'expired'` → offer to sign in again); `useSessions()` still lists ended sessions.
 */
export function useSession(parameters: UseSessionParameters = {}): Session | undefined {
  const { sessionId } = parameters
  return useSessionState((state) => usableSession(state, sessionId), parameters)
}
