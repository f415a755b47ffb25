import type { UseMutationResult } from '@tanstack/react-query'
import type {
  ExportWalletParameters,
  ExportWalletReturnType,
} from '../../core/actions/activities/exportWallet.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { exportWalletMutationOptions } from '../../core/query/exportWallet.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseExportWalletParameters = ClientParameter &
  MutationParameter<ExportWalletReturnType, ExportWalletParameters>
export type UseExportWalletReturnType = UseMutationResult<
  ExportWalletReturnType,
  LatchkeyError,
  ExportWalletParameters
>

/** Exports and decrypts a mnemonic in this page (headless; the drop-in shows it in the service iframe). */
export function useExportWallet(parameters: UseExportWalletParameters = {}): UseExportWalletReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<ExportWalletReturnType, ExportWalletParameters>(
    exportWalletMutationOptions(client),
    parameters.mutation,
  )
}
