import {
  type SignMessageParameters,
  type SignMessageReturnType,
  signMessage,
} from '../actions/activities/signMessage.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `signMessage`; `meta.invalidates` names the queries it makes stale. */
export function signMessageMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'signMessage'] as const,
    mutationFn: (variables: SignMessageParameters): Promise<SignMessageReturnType> =>
      signMessage(client, variables),
    meta: { invalidates: [] } satisfies LatchkeyMutationMeta,
  }
}
