import type {
  SignInWithWalletParameters,
  SignInWithWalletReturnType,
} from '../actions/auth/signInWithWallet.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `signInWithWallet`; `meta.invalidates` names the queries it makes stale. */
export function signInWithWalletMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'signInWithWallet'] as const,
    async mutationFn(variables: SignInWithWalletParameters): Promise<SignInWithWalletReturnType> {
      // Loaded on first use: keeps this flow out of the start-up bundle.
      const { signInWithWallet } = await import('../actions/auth/signInWithWallet.ts')
      return signInWithWallet(client, variables)
    },
    meta: { invalidates: ['*'] } satisfies LatchkeyMutationMeta,
  }
}
