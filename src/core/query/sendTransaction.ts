import {
  type SendTransactionParameters,
  type SendTransactionReturnType,
  sendTransaction,
} from '../actions/activities/sendTransaction.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `sendTransaction`; it makes nothing stale (follow the send with `getCallsStatusQueryOptions`). */
export function sendTransactionMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'sendTransaction'] as const,
    mutationFn: (variables: SendTransactionParameters): Promise<SendTransactionReturnType> =>
      sendTransaction(client, variables),
    meta: { invalidates: ['spendingLimits'] } satisfies LatchkeyMutationMeta,
  }
}
