import type { UseMutationResult } from '@tanstack/react-query'
import type {
  SignTransactionParameters,
  SignTransactionReturnType,
} from '../../core/actions/activities/signTransaction.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { signTransactionMutationOptions } from '../../core/query/signTransaction.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseSignTransactionParameters = ClientParameter &
  MutationParameter<SignTransactionReturnType, SignTransactionParameters>
export type UseSignTransactionReturnType = UseMutationResult<
  SignTransactionReturnType,
  LatchkeyError,
  SignTransactionParameters
>

/** Signs an unsigned Ethereum or Solana transaction (`sign_transaction`). */
export function useSignTransaction(
  parameters: UseSignTransactionParameters = {},
): UseSignTransactionReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<SignTransactionReturnType, SignTransactionParameters>(
    signTransactionMutationOptions(client),
    parameters.mutation,
  )
}
