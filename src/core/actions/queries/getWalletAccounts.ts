import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetWalletAccountsParameters = Omit<QueryRequest<'list_wallet_accounts'>, 'organizationId'> &
  QueryActionOptions
export type GetWalletAccountsReturnType = QueryResponse<'list_wallet_accounts'>

/** Wallet accounts, of one wallet or all (`list_wallet_accounts`). */
export async function getWalletAccounts(
  client: Latchkey,
  parameters: GetWalletAccountsParameters,
): Promise<GetWalletAccountsReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'list_wallet_accounts', body as QueryRequest<'list_wallet_accounts'>, options)
}
