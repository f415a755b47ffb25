import type {
  SignUpWithPasskeyParameters,
  SignUpWithPasskeyReturnType,
} from '../actions/auth/signUpWithPasskey.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `signUpWithPasskey`; `meta.invalidates` names the queries it makes stale. */
export function signUpWithPasskeyMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'signUpWithPasskey'] as const,
    async mutationFn(variables: SignUpWithPasskeyParameters): Promise<SignUpWithPasskeyReturnType> {
      // Loaded on first use: keeps this flow out of the start-up bundle.
      const { signUpWithPasskey } = await import('../actions/auth/signUpWithPasskey.ts')
      return signUpWithPasskey(client, variables)
    },
    meta: { invalidates: ['*'] } satisfies LatchkeyMutationMeta,
  }
}
