import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetWalletParameters = Omit<QueryRequest<'get_wallet'>, 'organizationId'> & QueryActionOptions
export type GetWalletReturnType = QueryResponse<'get_wallet'>

/** One wallet (`get_wallet`). */
export async function getWallet(
  client: Latchkey,
  parameters: GetWalletParameters,
): Promise<GetWalletReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'get_wallet', body as QueryRequest<'get_wallet'>, options)
}
