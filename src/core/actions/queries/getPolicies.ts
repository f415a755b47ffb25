import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetPoliciesParameters = Omit<QueryRequest<'list_policies'>, 'organizationId'> & QueryActionOptions
export type GetPoliciesReturnType = QueryResponse<'list_policies'>

/** Policies of the organization (`list_policies`). */
export async function getPolicies(
  client: Latchkey,
  parameters: GetPoliciesParameters = {},
): Promise<GetPoliciesReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'list_policies', body as QueryRequest<'list_policies'>, options)
}
