import { sessionStatusOf } from '../../core/session/selectors.ts'
import type { ClientStatus } from '../../core/session/sessionMachine.ts'
import type { UseSessionParameters } from './useSession.ts'
import { useSessionState } from './useSessionState.ts'

export type UseSessionStatusParameters = UseSessionParameters

/**
 * `signed-out`, `active`, `expiring`, `expired` or `storage-lost`: the active (or given) session's
 * status, which changes at the expiry instant. Where `useSession()` is `undefined`, this says
 * whether the person never signed in (`signed-out`) or should sign in again (`expired`,
 * `storage-lost`).
 */
export function useSessionStatus(parameters: UseSessionStatusParameters = {}): ClientStatus {
  const { sessionId } = parameters
  return useSessionState((state) => sessionStatusOf(state, sessionId), parameters)
}
