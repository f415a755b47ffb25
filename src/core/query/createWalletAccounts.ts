import {
  type CreateWalletAccountsParameters,
  type CreateWalletAccountsReturnType,
  createWalletAccounts,
} from '../actions/activities/createWalletAccounts.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createWalletAccounts`; `meta.invalidates` names the queries it makes stale. */
export function createWalletAccountsMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createWalletAccounts'] as const,
    mutationFn: (variables: CreateWalletAccountsParameters): Promise<CreateWalletAccountsReturnType> =>
      createWalletAccounts(client, variables),
    meta: { invalidates: ['walletAccounts', 'wallet'] } satisfies LatchkeyMutationMeta,
  }
}
