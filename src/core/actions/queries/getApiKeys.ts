import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetApiKeysParameters = Omit<QueryRequest<'get_api_keys'>, 'organizationId'> & QueryActionOptions
export type GetApiKeysReturnType = QueryResponse<'get_api_keys'>

/** API keys of a user (`get_api_keys`). */
export async function getApiKeys(
  client: Latchkey,
  parameters: GetApiKeysParameters,
): Promise<GetApiKeysReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'get_api_keys', body as QueryRequest<'get_api_keys'>, options)
}
