import type { SignInWithOAuthParameters, SignInWithOAuthReturnType } from '../actions/auth/signInWithOAuth.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `signInWithOAuth`; `meta.invalidates` names the queries it makes stale. */
export function signInWithOAuthMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'signInWithOAuth'] as const,
    async mutationFn(variables: SignInWithOAuthParameters): Promise<SignInWithOAuthReturnType> {
      // Loaded on first use: keeps this flow out of the start-up bundle.
      const { signInWithOAuth } = await import('../actions/auth/signInWithOAuth.ts')
      return signInWithOAuth(client, variables)
    },
    meta: { invalidates: ['*'] } satisfies LatchkeyMutationMeta,
  }
}
