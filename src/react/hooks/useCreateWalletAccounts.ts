import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreateWalletAccountsParameters,
  CreateWalletAccountsReturnType,
} from '../../core/actions/activities/createWalletAccounts.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createWalletAccountsMutationOptions } from '../../core/query/createWalletAccounts.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreateWalletAccountsParameters = ClientParameter &
  MutationParameter<CreateWalletAccountsReturnType, CreateWalletAccountsParameters>
export type UseCreateWalletAccountsReturnType = UseMutationResult<
  CreateWalletAccountsReturnType,
  LatchkeyError,
  CreateWalletAccountsParameters
>

/** Derives more accounts of a wallet. */
export function useCreateWalletAccounts(
  parameters: UseCreateWalletAccountsParameters = {},
): UseCreateWalletAccountsReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreateWalletAccountsReturnType, CreateWalletAccountsParameters>(
    createWalletAccountsMutationOptions(client),
    parameters.mutation,
  )
}
