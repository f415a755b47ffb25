import type { UseMutationResult } from '@tanstack/react-query'
import type {
  SendTransactionParameters,
  SendTransactionReturnType,
} from '../../core/actions/activities/sendTransaction.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { sendTransactionMutationOptions } from '../../core/query/sendTransaction.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseSendTransactionParameters = ClientParameter &
  MutationParameter<SendTransactionReturnType, SendTransactionParameters>
export type UseSendTransactionReturnType = UseMutationResult<
  SendTransactionReturnType,
  LatchkeyError,
  SendTransactionParameters
>

/** Sends one Ethereum call or Solana transaction (`sendTransaction`); follow the result with `useCallsStatus`. */
export function useSendTransaction(
  parameters: UseSendTransactionParameters = {},
): UseSendTransactionReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<SendTransactionReturnType, SendTransactionParameters>(
    sendTransactionMutationOptions(client),
    parameters.mutation,
  )
}
