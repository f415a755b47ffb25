import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetUserParameters = Omit<QueryRequest<'get_user'>, 'organizationId'> & QueryActionOptions
export type GetUserReturnType = QueryResponse<'get_user'>

/** One user (`get_user`). */
export async function getUser(client: Latchkey, parameters: GetUserParameters): Promise<GetUserReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'get_user', body as QueryRequest<'get_user'>, options)
}
