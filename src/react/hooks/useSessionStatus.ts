import type { ClientStatus } from '../../core/session/sessionMachine.ts'
import type { ClientParameter } from './internal.ts'
import { useSessionState } from './useSessionState.ts'

/** `signed-out`, `active`, `expiring`, `expired` or `storage-lost` (the active session's status). */
export function useSessionStatus(parameters: ClientParameter = {}): ClientStatus {
  return useSessionState((state) => state.status, parameters)
}
