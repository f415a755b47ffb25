import type { UseMutationResult } from '@tanstack/react-query'
import type {
  ExportWalletAccountBundleParameters,
  ExportWalletAccountBundleReturnType,
} from '../../core/actions/activities/exportWalletAccountBundle.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { exportWalletAccountBundleMutationOptions } from '../../core/query/exportWalletAccountBundle.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseExportWalletAccountBundleParameters = ClientParameter &
  MutationParameter<ExportWalletAccountBundleReturnType, ExportWalletAccountBundleParameters>
export type UseExportWalletAccountBundleReturnType = UseMutationResult<
  ExportWalletAccountBundleReturnType,
  LatchkeyError,
  ExportWalletAccountBundleParameters
>

/** `export_wallet_account` to a given target key (the iframe decrypts). */
export function useExportWalletAccountBundle(
  parameters: UseExportWalletAccountBundleParameters = {},
): UseExportWalletAccountBundleReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<ExportWalletAccountBundleReturnType, ExportWalletAccountBundleParameters>(
    exportWalletAccountBundleMutationOptions(client),
    parameters.mutation,
  )
}
