import { QueryClient, QueryClientContext } from '@tanstack/react-query'
import { useContext } from 'react'
import { LatchkeyContext } from '../context.ts'
import { LatchkeyProviderNotFoundError } from '../errors.ts'

/** The QueryClient Latchkey hooks use: the provider's, else the nearest QueryClientProvider's. */
export function useLatchkeyQueryClient(): QueryClient {
  const context = useContext(LatchkeyContext)
  const fromReactQuery = useContext(QueryClientContext)
  // Made here rather than by the provider, so that react-query's client loads with the first hook.
  if (context && !context.appQueryClient) context.ownQueryClient.current ??= new QueryClient()
  const queryClient = context ? (context.appQueryClient ?? context.ownQueryClient.current) : fromReactQuery
  if (!queryClient) throw new LatchkeyProviderNotFoundError()
  return queryClient
}
