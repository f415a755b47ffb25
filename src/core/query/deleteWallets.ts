import {
  type DeleteWalletsParameters,
  type DeleteWalletsReturnType,
  deleteWallets,
} from '../actions/activities/deleteWallets.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `deleteWallets`; `meta.invalidates` names the queries it makes stale. */
export function deleteWalletsMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'deleteWallets'] as const,
    mutationFn: (variables: DeleteWalletsParameters): Promise<DeleteWalletsReturnType> =>
      deleteWallets(client, variables),
    meta: { invalidates: ['wallets', 'walletAccounts', 'wallet'] } satisfies LatchkeyMutationMeta,
  }
}
