import type { UseMutationResult } from '@tanstack/react-query'
import type {
  ExportWalletBundleParameters,
  ExportWalletBundleReturnType,
} from '../../core/actions/activities/exportWalletBundle.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { exportWalletBundleMutationOptions } from '../../core/query/exportWalletBundle.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseExportWalletBundleParameters = ClientParameter &
  MutationParameter<ExportWalletBundleReturnType, ExportWalletBundleParameters>
export type UseExportWalletBundleReturnType = UseMutationResult<
  ExportWalletBundleReturnType,
  LatchkeyError,
  ExportWalletBundleParameters
>

/** `export_wallet` to a given target key (the iframe decrypts). */
export function useExportWalletBundle(
  parameters: UseExportWalletBundleParameters = {},
): UseExportWalletBundleReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<ExportWalletBundleReturnType, ExportWalletBundleParameters>(
    exportWalletBundleMutationOptions(client),
    parameters.mutation,
  )
}
