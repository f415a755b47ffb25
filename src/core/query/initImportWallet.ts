import {
  type InitImportWalletParameters,
  type InitImportWalletReturnType,
  initImportWallet,
} from '../actions/activities/initImportWallet.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `initImportWallet`; `meta.invalidates` names the queries it makes stale. */
export function initImportWalletMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'initImportWallet'] as const,
    mutationFn: (variables: InitImportWalletParameters): Promise<InitImportWalletReturnType> =>
      initImportWallet(client, variables),
    meta: { invalidates: [] } satisfies LatchkeyMutationMeta,
  }
}
