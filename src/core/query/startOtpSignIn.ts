import {
  type StartOtpSignInParameters,
  type StartOtpSignInReturnType,
  startOtpSignIn,
} from '../actions/auth/startOtpSignIn.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `startOtpSignIn`; `meta.invalidates` names the queries it makes stale. */
export function startOtpSignInMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'startOtpSignIn'] as const,
    mutationFn: (variables: StartOtpSignInParameters): Promise<StartOtpSignInReturnType> =>
      startOtpSignIn(client, variables),
    meta: { invalidates: [] } satisfies LatchkeyMutationMeta,
  }
}
