import type { UseMutationResult } from '@tanstack/react-query'
import type {
  ImportWalletBundleParameters,
  ImportWalletBundleReturnType,
} from '../../core/actions/activities/importWalletBundle.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { importWalletBundleMutationOptions } from '../../core/query/importWalletBundle.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseImportWalletBundleParameters = ClientParameter &
  MutationParameter<ImportWalletBundleReturnType, ImportWalletBundleParameters>
export type UseImportWalletBundleReturnType = UseMutationResult<
  ImportWalletBundleReturnType,
  LatchkeyError,
  ImportWalletBundleParameters
>

/** `import_wallet` with an already encrypted bundle. */
export function useImportWalletBundle(
  parameters: UseImportWalletBundleParameters = {},
): UseImportWalletBundleReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<ImportWalletBundleReturnType, ImportWalletBundleParameters>(
    importWalletBundleMutationOptions(client),
    parameters.mutation,
  )
}
