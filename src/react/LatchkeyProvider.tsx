import type { QueryClient } from '@tanstack/react-query'
import { type ReactNode, useEffect, useMemo, useState } from 'react'
import { hasPendingOAuth } from '../core/actions/auth/pendingOAuth.ts'
import { createLatchkey, type Latchkey, type LatchkeyConfig } from '../core/createLatchkey.ts'
import { existingQueryClient, LatchkeyContext, type LatchkeyContextValue } from './context.ts'

export type LatchkeyProviderProps = {
  children?: ReactNode
  /**
   * The app's QueryClient. Latchkey hooks pass it to react-query explicitly, so the app's own
   * `QueryClientProvider` (if any) is never shadowed.
   * @default a QueryClient owned by this provider
   */
  queryClient?: QueryClient
  /** Called when finishing an OAuth sign-in that returned through a full-page redirect fails. */
  onOAuthRedirectError?: (error: unknown) => void
} & (
  | {
      /** Creates the client once, on first render (safe during SSR). */ config: LatchkeyConfig
      client?: never
    }
  | { /** An existing client (e.g. shared with non-React code). */ client: Latchkey; config?: never }
)

/**
 * Provides one Latchkey client and the QueryClient its hooks use (its own is made by the first
 * hook that needs one). Persisted sessions are read in
 * an effect, so server rendering and the first client render agree (signed out) and nothing
 * touches browser storage on the server.
 */
export function LatchkeyProvider(props: LatchkeyProviderProps) {
  const [client] = useState(() => props.client ?? createLatchkey(props.config as LatchkeyConfig))
  const [ownQueryClient] = useState<LatchkeyContextValue['ownQueryClient']>(() => ({}))
  const { queryClient, onOAuthRedirectError } = props
  const value = useMemo(
    () => ({ client, appQueryClient: queryClient, ownQueryClient }),
    [client, queryClient, ownQueryClient],
  )
  useEffect(() => {
    let cancelled = false
    client
      .hydrate()
      .then(async () => {
        if (cancelled || !hasPendingOAuth(client)) return
        const { completeOAuthRedirect } = await import('../core/actions/auth/completeOAuthRedirect.ts')
        await completeOAuthRedirect(client)
        // No query client yet means no query to refresh.
        await existingQueryClient(value)?.invalidateQueries({ queryKey: ['latchkey'] })
      })
      .catch((error) => onOAuthRedirectError?.(error))
    return () => {
      cancelled = true
    }
  }, [client, value, onOAuthRedirectError])
  return <LatchkeyContext.Provider value={value}>{props.children}</LatchkeyContext.Provider>
}
