import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetWhoamiParameters = Omit<QueryRequest<'whoami'>, 'organizationId'> & QueryActionOptions
export type GetWhoamiReturnType = QueryResponse<'whoami'>

/** Who the session is: organization and user (`whoami`). */
export async function getWhoami(
  client: Latchkey,
  parameters: GetWhoamiParameters,
): Promise<GetWhoamiReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'whoami', body as QueryRequest<'whoami'>, options)
}
