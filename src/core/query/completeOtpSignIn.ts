import {
  type CompleteOtpSignInParameters,
  type CompleteOtpSignInReturnType,
  completeOtpSignIn,
} from '../actions/auth/completeOtpSignIn.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `completeOtpSignIn`; `meta.invalidates` names the queries it makes stale. */
export function completeOtpSignInMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'completeOtpSignIn'] as const,
    mutationFn: (variables: CompleteOtpSignInParameters): Promise<CompleteOtpSignInReturnType> =>
      completeOtpSignIn(client, variables),
    meta: { invalidates: ['*'] } satisfies LatchkeyMutationMeta,
  }
}
