import type { ImportWalletParameters, ImportWalletReturnType } from '../actions/activities/importWallet.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `importWallet`; `meta.invalidates` names the queries it makes stale. */
export function importWalletMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'importWallet'] as const,
    async mutationFn(variables: ImportWalletParameters): Promise<ImportWalletReturnType> {
      // Loaded on first use: keeps this flow out of the start-up bundle.
      const { importWallet } = await import('../actions/activities/importWallet.ts')
      return importWallet(client, variables)
    },
    meta: { invalidates: ['wallets', 'walletAccounts'] } satisfies LatchkeyMutationMeta,
  }
}
