import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetSendCapabilitiesParameters = QueryActionOptions
export type GetSendCapabilitiesReturnType = QueryResponse<'latchkey_get_send_capabilities'>

/**
 * What the service sends on each chain it has a node for, for the organization: whether it takes
 * `sponsor: true` there and runs several calls as one transaction (`latchkey_get_send_capabilities`).
 */
export async function getSendCapabilities(
  client: Latchkey,
  parameters: GetSendCapabilitiesParameters = {},
): Promise<GetSendCapabilitiesReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(
    client,
    'latchkey_get_send_capabilities',
    body as QueryRequest<'latchkey_get_send_capabilities'>,
    options,
  )
}
