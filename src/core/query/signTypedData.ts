import {
  type SignTypedDataParameters,
  type SignTypedDataReturnType,
  signTypedData,
} from '../actions/activities/signTypedData.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `signTypedData`; `meta.invalidates` names the queries it makes stale. */
export function signTypedDataMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'signTypedData'] as const,
    mutationFn: (variables: SignTypedDataParameters): Promise<SignTypedDataReturnType> =>
      signTypedData(client, variables),
    meta: { invalidates: [] } satisfies LatchkeyMutationMeta,
  }
}
