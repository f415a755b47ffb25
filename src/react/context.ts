import type { QueryClient } from '@tanstack/react-query'
import { createContext } from 'react'
import type { Latchkey } from '../core/createLatchkey.ts'

export interface LatchkeyContextValue {
  client: Latchkey
  /** The app's QueryClient, when it passed one. */
  appQueryClient: QueryClient | undefined
  /**
   * Otherwise the provider's own, made by the first hook that needs it (`useLatchkeyQueryClient`):
   * an app that renders no query hook (a sign-in button that was never pressed) loads no react-query.
   */
  ownQueryClient: { current?: QueryClient | undefined }
}

export const LatchkeyContext = createContext<LatchkeyContextValue | undefined>(undefined)

/** The QueryClient Latchkey hooks use, if one exists yet (a provider's is made on first use). */
export const existingQueryClient = (context: LatchkeyContextValue): QueryClient | undefined =>
  context.appQueryClient ?? context.ownQueryClient.current
