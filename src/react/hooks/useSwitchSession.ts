import { useCallback } from 'react'
import { switchSession } from '../../core/session/sessions.ts'
import type { ClientParameter } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

/** Returns `(sessionId) => void` making another session the active one. */
export function useSwitchSession(parameters: ClientParameter = {}): (sessionId: string) => void {
  const client = useLatchkey(parameters)
  return useCallback((sessionId: string) => void switchSession(client, { sessionId }), [client])
}
