import type {
  ExportWalletAccountParameters,
  ExportWalletAccountReturnType,
} from '../actions/activities/exportWalletAccount.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `exportWalletAccount`; `meta.invalidates` names the queries it makes stale. */
export function exportWalletAccountMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'exportWalletAccount'] as const,
    async mutationFn(variables: ExportWalletAccountParameters): Promise<ExportWalletAccountReturnType> {
      // Loaded on first use: keeps this flow out of the start-up bundle.
      const { exportWalletAccount } = await import('../actions/activities/exportWalletAccount.ts')
      return exportWalletAccount(client, variables)
    },
    meta: { invalidates: ['wallets', 'wallet'] } satisfies LatchkeyMutationMeta,
  }
}
