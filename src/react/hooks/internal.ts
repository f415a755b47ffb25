import {
  type UseMutationOptions,
  type UseMutationResult,
  type UseQueryOptions,
  type UseQueryResult,
  useMutation,
  useQuery,
} from '@tanstack/react-query'
import { useStore } from 'zustand'
import type { Latchkey } from '../../core/createLatchkey.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { type LatchkeyMutationMeta, retryUnlessSessionEnded } from '../../core/query/utils.ts'
import { invalidateAfter } from './invalidateAfter.ts'
import { useLatchkeyQueryClient } from './useLatchkeyQueryClient.ts'

/** Mutation variables that may be omitted: `mutate()` works (TanStack's idiom needs `void`). */
// biome-ignore lint/suspicious/noConfusingVoidType: `void` is what lets TanStack's mutate() be called without variables
export type OptionalVariables<T> = T | void

/** Every hook accepts an explicit client. */
export type ClientParameter = { client?: Latchkey | undefined }

/** TanStack query options a hook's caller may set (under `query`). */
export type QueryParameter<TData> = {
  query?: Omit<UseQueryOptions<TData, LatchkeyError, TData>, 'queryKey' | 'queryFn'> | undefined
}

/** TanStack mutation options a hook's caller may set (under `mutation`). */
export type MutationParameter<TData, TVariables> = {
  mutation?:
    | Omit<UseMutationOptions<TData, LatchkeyError, TVariables>, 'mutationFn' | 'mutationKey'>
    | undefined
}

/**
 * Re-renders only when the session a query reads as changes (switch, sign-in, sign-out,
 * expiry), not on unrelated store updates: the selector returns a string.
 */
export const useSessionScope = (client: Latchkey, sessionId?: string) =>
  useStore(client.store, (state) => {
    const session = state.sessions[sessionId ?? state.activeId ?? '']
    return session ? `${session.id}:${session.status}` : ''
  })

export function useLatchkeyQuery<TData>(
  client: Latchkey,
  options: {
    queryKey: readonly unknown[]
    queryFn: (context: { signal: AbortSignal }) => Promise<TData>
    enabled?: boolean
  },
  query: QueryParameter<TData>['query'],
  sessionId?: string,
): UseQueryResult<TData, LatchkeyError> {
  useSessionScope(client, sessionId)
  const queryClient = useLatchkeyQueryClient()
  const enabled = (options.enabled ?? true) && (typeof query?.enabled === 'boolean' ? query.enabled : true)
  // An ended session's error shows at once: no retries with backoff first.
  const retry = retryUnlessSessionEnded(query?.retry ?? queryClient.getDefaultOptions().queries?.retry)
  return useQuery<TData, LatchkeyError, TData>({ ...query, ...options, enabled, retry }, queryClient)
}

export function useLatchkeyMutation<TData, TVariables>(
  options: {
    mutationKey: readonly unknown[]
    mutationFn: (variables: TVariables) => Promise<TData>
    meta: LatchkeyMutationMeta
  },
  mutation: MutationParameter<TData, TVariables>['mutation'],
): UseMutationResult<TData, LatchkeyError, TVariables> {
  const queryClient = useLatchkeyQueryClient()
  return useMutation<TData, LatchkeyError, TVariables>(
    {
      ...mutation,
      ...options,
      async onSuccess(...args) {
        await invalidateAfter(queryClient, options.meta)
        return mutation?.onSuccess?.(...args)
      },
    },
    queryClient,
  )
}
