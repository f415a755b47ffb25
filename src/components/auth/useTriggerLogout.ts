import { useCallback, useContext, useState } from 'react'
import { existingQueryClient, LatchkeyContext } from '../../react/context.ts'
import { invalidateAfter } from '../../react/hooks/invalidateAfter.ts'
import { useLatchkey } from '../../react/hooks/useLatchkey.ts'

/**
 * The modal trigger's "Sign out": what `useLogout().mutate()` does (sign the active session out,
 * then invalidate what `logoutMutationOptions` names), with the logout code loaded on press and
 * no react-query mutation, so the trigger costs a page that never signs out next to nothing.
 * As with `mutate()`, a failure is not thrown: the session is gone locally either way.
 */
export function useTriggerLogout(): { logout: () => void; isPending: boolean } {
  const client = useLatchkey()
  const context = useContext(LatchkeyContext)
  const [isPending, setPending] = useState(false)
  const logout = useCallback(() => {
    setPending(true)
    import('../../core/query/logout.ts')
      .then(async ({ logoutMutationOptions }) => {
        const options = logoutMutationOptions(client)
        await options.mutationFn({})
        const queryClient = context && existingQueryClient(context)
        if (queryClient) await invalidateAfter(queryClient, options.meta)
      })
      .catch(() => undefined)
      .finally(() => setPending(false))
  }, [client, context])
  return { logout, isPending }
}
