import type { UseMutationResult } from '@tanstack/react-query'
import type {
  InitImportWalletParameters,
  InitImportWalletReturnType,
} from '../../core/actions/activities/initImportWallet.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { initImportWalletMutationOptions } from '../../core/query/initImportWallet.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseInitImportWalletParameters = ClientParameter &
  MutationParameter<InitImportWalletReturnType, InitImportWalletParameters>
export type UseInitImportWalletReturnType = UseMutationResult<
  InitImportWalletReturnType,
  LatchkeyError,
  InitImportWalletParameters
>

/** `init_import_wallet`: the signed import bundle. */
export function useInitImportWallet(
  parameters: UseInitImportWalletParameters = {},
): UseInitImportWalletReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<InitImportWalletReturnType, InitImportWalletParameters>(
    initImportWalletMutationOptions(client),
    parameters.mutation,
  )
}
