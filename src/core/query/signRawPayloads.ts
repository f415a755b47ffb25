import {
  type SignRawPayloadsParameters,
  type SignRawPayloadsReturnType,
  signRawPayloads,
} from '../actions/activities/signRawPayloads.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `signRawPayloads`; `meta.invalidates` names the queries it makes stale. */
export function signRawPayloadsMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'signRawPayloads'] as const,
    mutationFn: (variables: SignRawPayloadsParameters): Promise<SignRawPayloadsReturnType> =>
      signRawPayloads(client, variables),
    meta: { invalidates: [] } satisfies LatchkeyMutationMeta,
  }
}
