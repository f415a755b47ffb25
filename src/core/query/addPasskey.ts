import type { AddPasskeyParameters, AddPasskeyReturnType } from '../actions/auth/addPasskey.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `addPasskey`; `meta.invalidates` names the queries it makes stale. */
export function addPasskeyMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'addPasskey'] as const,
    async mutationFn(variables: AddPasskeyParameters = {}): Promise<AddPasskeyReturnType> {
      // Loaded on first use: keeps this flow out of the start-up bundle.
      const { addPasskey } = await import('../actions/auth/addPasskey.ts')
      return addPasskey(client, variables)
    },
    meta: { invalidates: ['authenticator', 'user', 'users', 'linkedLogins'] } satisfies LatchkeyMutationMeta,
  }
}
