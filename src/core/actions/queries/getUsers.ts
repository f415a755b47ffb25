import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetUsersParameters = Omit<QueryRequest<'list_users'>, 'organizationId'> & QueryActionOptions
export type GetUsersReturnType = QueryResponse<'list_users'>

/** Users of the organization (`list_users`). */
export async function getUsers(
  client: Latchkey,
  parameters: GetUsersParameters,
): Promise<GetUsersReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'list_users', body as QueryRequest<'list_users'>, options)
}
