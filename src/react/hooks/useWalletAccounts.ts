import type { UseQueryResult } from '@tanstack/react-query'
import type { GetWalletAccountsReturnType } from '../../core/actions/queries/getWalletAccounts.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import {
  type GetWalletAccountsQueryParameters,
  getWalletAccountsQueryOptions,
} from '../../core/query/getWalletAccounts.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseWalletAccountsParameters = GetWalletAccountsQueryParameters &
  ClientParameter &
  QueryParameter<GetWalletAccountsReturnType>
export type UseWalletAccountsReturnType = UseQueryResult<GetWalletAccountsReturnType, LatchkeyError>

/** Wallet accounts, of one wallet (`walletId`) or all (`list_wallet_accounts`). */
export function useWalletAccounts(parameters: UseWalletAccountsParameters = {}): UseWalletAccountsReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getWalletAccountsQueryOptions(client, rest), query, rest.sessionId)
}
