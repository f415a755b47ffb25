import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetUserTagsParameters = Omit<QueryRequest<'list_user_tags'>, 'organizationId'> &
  QueryActionOptions
export type GetUserTagsReturnType = QueryResponse<'list_user_tags'>

/** User tags of the organization (`list_user_tags`). */
export async function getUserTags(
  client: Latchkey,
  parameters: GetUserTagsParameters,
): Promise<GetUserTagsReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'list_user_tags', body as QueryRequest<'list_user_tags'>, options)
}
