import type { UseMutationResult } from '@tanstack/react-query'
import type {
  ExportWalletAccountParameters,
  ExportWalletAccountReturnType,
} from '../../core/actions/activities/exportWalletAccount.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { exportWalletAccountMutationOptions } from '../../core/query/exportWalletAccount.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseExportWalletAccountParameters = ClientParameter &
  MutationParameter<ExportWalletAccountReturnType, ExportWalletAccountParameters>
export type UseExportWalletAccountReturnType = UseMutationResult<
  ExportWalletAccountReturnType,
  LatchkeyError,
  ExportWalletAccountParameters
>

/** Exports and decrypts an account private key in this page (headless). */
export function useExportWalletAccount(
  parameters: UseExportWalletAccountParameters = {},
): UseExportWalletAccountReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<ExportWalletAccountReturnType, ExportWalletAccountParameters>(
    exportWalletAccountMutationOptions(client),
    parameters.mutation,
  )
}
