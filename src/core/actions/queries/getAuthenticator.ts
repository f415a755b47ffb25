import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetAuthenticatorParameters = Omit<QueryRequest<'get_authenticator'>, 'organizationId'> &
  QueryActionOptions
export type GetAuthenticatorReturnType = QueryResponse<'get_authenticator'>

/** One passkey of the organization (`get_authenticator`). */
export async function getAuthenticator(
  client: Latchkey,
  parameters: GetAuthenticatorParameters,
): Promise<GetAuthenticatorReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'get_authenticator', body as QueryRequest<'get_authenticator'>, options)
}
