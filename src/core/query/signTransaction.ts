import {
  type SignTransactionParameters,
  type SignTransactionReturnType,
  signTransaction,
} from '../actions/activities/signTransaction.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `signTransaction`; `meta.invalidates` names the queries it makes stale. */
export function signTransactionMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'signTransaction'] as const,
    mutationFn: (variables: SignTransactionParameters): Promise<SignTransactionReturnType> =>
      signTransaction(client, variables),
    meta: { invalidates: ['spendingLimits'] } satisfies LatchkeyMutationMeta,
  }
}
