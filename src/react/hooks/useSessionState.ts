import { useStore } from 'zustand'
import type { SessionState } from '../../core/session/types.ts'
import type { ClientParameter } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

/**
 * Reads session state through a selector: the component re-renders only when the selected value
 * changes (return primitives or objects taken from the state, not new ones).
 */
export function useSessionState<T>(
  selector: (state: SessionState) => T,
  parameters: ClientParameter = {},
): T {
  const client = useLatchkey(parameters)
  return useStore(client.store, selector)
}
