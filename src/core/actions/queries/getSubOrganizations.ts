import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetSubOrganizationsParameters = Omit<QueryRequest<'list_suborgs'>, 'organizationId'> &
  QueryActionOptions
export type GetSubOrganizationsReturnType = QueryResponse<'list_suborgs'>

/** Sub-organizations of an organization, filtered and paginated (`list_suborgs`). */
export async function getSubOrganizations(
  client: Latchkey,
  parameters: GetSubOrganizationsParameters,
): Promise<GetSubOrganizationsReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'list_suborgs', body as QueryRequest<'list_suborgs'>, options)
}
