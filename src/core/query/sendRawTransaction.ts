import {
  type SendRawTransactionParameters,
  type SendRawTransactionReturnType,
  sendRawTransaction,
} from '../actions/activities/sendRawTransaction.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `sendRawTransaction`; `meta.invalidates` names the queries it makes stale. */
export function sendRawTransactionMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'sendRawTransaction'] as const,
    mutationFn: (variables: SendRawTransactionParameters): Promise<SendRawTransactionReturnType> =>
      sendRawTransaction(client, variables),
    meta: { invalidates: [] } satisfies LatchkeyMutationMeta,
  }
}
