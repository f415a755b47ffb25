import type { InvalidateOptions, QueryClient } from '@tanstack/react-query'
import type { LatchkeyMutationMeta } from '../../core/query/utils.ts'

/** Invalidates the query families a mutation names in `meta.invalidates` (`options` as TanStack's). */
export async function invalidateAfter(
  queryClient: QueryClient,
  meta: LatchkeyMutationMeta,
  options?: InvalidateOptions,
): Promise<void> {
  // Signing in or out changes every session-scoped read, but not the proxy's feature toggles.
  if (meta.invalidates.includes('*'))
    return queryClient.invalidateQueries(
      {
        queryKey: ['latchkey'],
        predicate: (query) => query.queryKey[1] !== 'walletKitConfig',
      },
      options,
    )
  await Promise.all(
    meta.invalidates.map((name) => queryClient.invalidateQueries({ queryKey: ['latchkey', name] }, options)),
  )
}
