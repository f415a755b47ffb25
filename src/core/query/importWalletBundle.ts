import {
  type ImportWalletBundleParameters,
  type ImportWalletBundleReturnType,
  importWalletBundle,
} from '../actions/activities/importWalletBundle.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `importWalletBundle`; `meta.invalidates` names the queries it makes stale. */
export function importWalletBundleMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'importWalletBundle'] as const,
    mutationFn: (variables: ImportWalletBundleParameters): Promise<ImportWalletBundleReturnType> =>
      importWalletBundle(client, variables),
    meta: { invalidates: ['wallets', 'walletAccounts'] } satisfies LatchkeyMutationMeta,
  }
}
