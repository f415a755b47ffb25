import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetActivityParameters = Omit<QueryRequest<'get_activity'>, 'organizationId'> & QueryActionOptions
export type GetActivityReturnType = QueryResponse<'get_activity'>

/** One activity, e.g. to watch one waiting for consensus (`get_activity`). */
export async function getActivity(
  client: Latchkey,
  parameters: GetActivityParameters,
): Promise<GetActivityReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'get_activity', body as QueryRequest<'get_activity'>, options)
}
