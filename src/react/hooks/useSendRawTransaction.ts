import type { UseMutationResult } from '@tanstack/react-query'
import type {
  SendRawTransactionParameters,
  SendRawTransactionReturnType,
} from '../../core/actions/activities/sendRawTransaction.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { sendRawTransactionMutationOptions } from '../../core/query/sendRawTransaction.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseSendRawTransactionParameters = ClientParameter &
  MutationParameter<SendRawTransactionReturnType, SendRawTransactionParameters>
export type UseSendRawTransactionReturnType = UseMutationResult<
  SendRawTransactionReturnType,
  LatchkeyError,
  SendRawTransactionParameters
>

/** Broadcasts a signed Ethereum transaction (`eth_send_raw_transaction`). */
export function useSendRawTransaction(
  parameters: UseSendRawTransactionParameters = {},
): UseSendRawTransactionReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<SendRawTransactionReturnType, SendRawTransactionParameters>(
    sendRawTransactionMutationOptions(client),
    parameters.mutation,
  )
}
