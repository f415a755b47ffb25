import type { UseMutationResult } from '@tanstack/react-query'
import type {
  ImportWalletParameters,
  ImportWalletReturnType,
} from '../../core/actions/activities/importWallet.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { importWalletMutationOptions } from '../../core/query/importWallet.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseImportWalletParameters = ClientParameter &
  MutationParameter<ImportWalletReturnType, ImportWalletParameters>
export type UseImportWalletReturnType = UseMutationResult<
  ImportWalletReturnType,
  LatchkeyError,
  ImportWalletParameters
>

/** Encrypts a mnemonic to the verified import bundle and imports it (headless). */
export function useImportWallet(parameters: UseImportWalletParameters = {}): UseImportWalletReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<ImportWalletReturnType, ImportWalletParameters>(
    importWalletMutationOptions(client),
    parameters.mutation,
  )
}
