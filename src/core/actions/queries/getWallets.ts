import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetWalletsParameters = Omit<QueryRequest<'list_wallets'>, 'organizationId'> & QueryActionOptions
export type GetWalletsReturnType = QueryResponse<'list_wallets'>

/** Wallets of the organization (`list_wallets`). */
export async function getWallets(
  client: Latchkey,
  parameters: GetWalletsParameters,
): Promise<GetWalletsReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'list_wallets', body as QueryRequest<'list_wallets'>, options)
}
