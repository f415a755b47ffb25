import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreateWalletParameters,
  CreateWalletReturnType,
} from '../../core/actions/activities/createWallet.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createWalletMutationOptions } from '../../core/query/createWallet.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreateWalletParameters = ClientParameter &
  MutationParameter<CreateWalletReturnType, CreateWalletParameters>
export type UseCreateWalletReturnType = UseMutationResult<
  CreateWalletReturnType,
  LatchkeyError,
  CreateWalletParameters
>

/** Creates a wallet; `chains` picks conventional accounts. */
export function useCreateWallet(parameters: UseCreateWalletParameters = {}): UseCreateWalletReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreateWalletReturnType, CreateWalletParameters>(
    createWalletMutationOptions(client),
    parameters.mutation,
  )
}
