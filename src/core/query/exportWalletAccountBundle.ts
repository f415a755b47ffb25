import {
  type ExportWalletAccountBundleParameters,
  type ExportWalletAccountBundleReturnType,
  exportWalletAccountBundle,
} from '../actions/activities/exportWalletAccountBundle.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `exportWalletAccountBundle`; `meta.invalidates` names the queries it makes stale. */
export function exportWalletAccountBundleMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'exportWalletAccountBundle'] as const,
    mutationFn: (
      variables: ExportWalletAccountBundleParameters,
    ): Promise<ExportWalletAccountBundleReturnType> => exportWalletAccountBundle(client, variables),
    meta: { invalidates: ['wallets', 'wallet'] } satisfies LatchkeyMutationMeta,
  }
}
