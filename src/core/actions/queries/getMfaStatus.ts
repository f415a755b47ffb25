import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetMfaStatusParameters = Omit<QueryRequest<'get_mfa_status'>, 'organizationId'> &
  QueryActionOptions
export type GetMfaStatusReturnType = QueryResponse<'get_mfa_status'>

/** What an activity waiting for authenticators still needs, per MFA policy (`get_mfa_status`). */
export async function getMfaStatus(
  client: Latchkey,
  parameters: GetMfaStatusParameters,
): Promise<GetMfaStatusReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'get_mfa_status', body as QueryRequest<'get_mfa_status'>, options)
}
