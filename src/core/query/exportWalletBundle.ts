import {
  type ExportWalletBundleParameters,
  type ExportWalletBundleReturnType,
  exportWalletBundle,
} from '../actions/activities/exportWalletBundle.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `exportWalletBundle`; `meta.invalidates` names the queries it makes stale. */
export function exportWalletBundleMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'exportWalletBundle'] as const,
    mutationFn: (variables: ExportWalletBundleParameters): Promise<ExportWalletBundleReturnType> =>
      exportWalletBundle(client, variables),
    meta: { invalidates: ['wallets', 'wallet'] } satisfies LatchkeyMutationMeta,
  }
}
