import {
  type CreateWalletParameters,
  type CreateWalletReturnType,
  createWallet,
} from '../actions/activities/createWallet.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createWallet`; `meta.invalidates` names the queries it makes stale. */
export function createWalletMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createWallet'] as const,
    mutationFn: (variables: CreateWalletParameters): Promise<CreateWalletReturnType> =>
      createWallet(client, variables),
    meta: { invalidates: ['wallets', 'walletAccounts'] } satisfies LatchkeyMutationMeta,
  }
}
