import type { ExportWalletParameters, ExportWalletReturnType } from '../actions/activities/exportWallet.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `exportWallet`; `meta.invalidates` names the queries it makes stale. */
export function exportWalletMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'exportWallet'] as const,
    async mutationFn(variables: ExportWalletParameters): Promise<ExportWalletReturnType> {
      // Loaded on first use: keeps this flow out of the start-up bundle.
      const { exportWallet } = await import('../actions/activities/exportWallet.ts')
      return exportWallet(client, variables)
    },
    meta: { invalidates: ['wallets', 'wallet'] } satisfies LatchkeyMutationMeta,
  }
}
