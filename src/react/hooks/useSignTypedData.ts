import type { UseMutationResult } from '@tanstack/react-query'
import type {
  SignTypedDataParameters,
  SignTypedDataReturnType,
} from '../../core/actions/activities/signTypedData.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { signTypedDataMutationOptions } from '../../core/query/signTypedData.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseSignTypedDataParameters = ClientParameter &
  MutationParameter<SignTypedDataReturnType, SignTypedDataParameters>
export type UseSignTypedDataReturnType = UseMutationResult<
  SignTypedDataReturnType,
  LatchkeyError,
  SignTypedDataParameters
>

/** Signs EIP-712 typed data. */
export function useSignTypedData(parameters: UseSignTypedDataParameters = {}): UseSignTypedDataReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<SignTypedDataReturnType, SignTypedDataParameters>(
    signTypedDataMutationOptions(client),
    parameters.mutation,
  )
}
