import type { QueryClient } from '@tanstack/react-query'
import { type ReactElement, type ReactNode, useEffect, useMemo, useState } from 'react'
import { hasPendingOAuth } from '../core/actions/auth/pendingOAuth.ts'
import { ConfigInvalidError } from '../core/baseErrors.ts'
import { createLatchkey, type Latchkey, type LatchkeyConfigParameter } from '../core/createLatchkey.ts'
import { ConfigErrorPanel } from './ConfigErrorPanel.tsx'
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
      /** Creates the client once, on first render (safe during SSR). */ config: LatchkeyConfigParameter
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
// The return type is spelled out: inferred from React 19's types it would include what React 18's
// JSX does not accept as a component's result (bigint, promises).
export function LatchkeyProvider(props: LatchkeyProviderProps): ReactElement {
  const [created] = useState((): { client: Latchkey } | { panel: ReactElement } => {
    if (props.client) return { client: props.client }
    try {
      return { client: createLatchkey(props.config as LatchkeyConfigParameter) }
    } catch (error) {
      // A development build shows what to fix in place of the app (a config read from unset env
      // variables is otherwise a blank page); a production build throws, as it always has. The
      // plain `process.env.NODE_ENV` is what bundlers replace (in dependencies too, as React's own
      // entry relies on), so they fold this and drop the panel from production builds. No
      // `typeof process` guard: in a browser `process` does not exist even where the bundler
      // replaced the expression (Vite's development server), so such a guard kept every
      // development page on the production path.
      if (error instanceof ConfigInvalidError && process.env.NODE_ENV !== 'production') {
        console.warn('[latchkey] CONFIG_INVALID:', error)
        return { panel: <ConfigErrorPanel error={error} /> }
      }
      throw error
    }
  })
  if ('panel' in created) return created.panel
  return (
    <ClientProvider
      client={created.client}
      queryClient={props.queryClient}
      onOAuthRedirectError={props.onOAuthRedirectError}
    >
      {props.children}
    </ClientProvider>
  )
}

function ClientProvider(props: {
  client: Latchkey
  children?: ReactNode
  queryClient: QueryClient | undefined
  onOAuthRedirectError: ((error: unknown) => void) | undefined
}) {
  const { client } = props
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
