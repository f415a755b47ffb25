import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetPolicyParameters = Omit<QueryRequest<'get_policy'>, 'organizationId'> & QueryActionOptions
export type GetPolicyReturnType = QueryResponse<'get_policy'>

/** One policy (`get_policy`). */
export async function getPolicy(
  client: Latchkey,
  parameters: GetPolicyParameters,
): Promise<GetPolicyReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'get_policy', body as QueryRequest<'get_policy'>, options)
}
