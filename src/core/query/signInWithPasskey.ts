import type {
  SignInWithPasskeyParameters,
  SignInWithPasskeyReturnType,
} from '../actions/auth/signInWithPasskey.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `signInWithPasskey`; `meta.invalidates` names the queries it makes stale. */
export function signInWithPasskeyMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'signInWithPasskey'] as const,
    async mutationFn(variables: SignInWithPasskeyParameters = {}): Promise<SignInWithPasskeyReturnType> {
      // Loaded on first use: keeps this flow out of the start-up bundle.
      const { signInWithPasskey } = await import('../actions/auth/signInWithPasskey.ts')
      return signInWithPasskey(client, variables)
    },
    meta: { invalidates: ['*'] } satisfies LatchkeyMutationMeta,
  }
}
