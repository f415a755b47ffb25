import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetSpendingLimitsParameters = Omit<
  QueryRequest<'latchkey_list_spending_limits'>,
  'organizationId'
> &
  QueryActionOptions
export type GetSpendingLimitsReturnType = QueryResponse<'latchkey_list_spending_limits'>

/**
 * Spending limits of the organization (`latchkey_list_spending_limits`), each with its window's
 * `used`, `remaining` and `nextReleaseTimestampMs` now.
 */
export async function getSpendingLimits(
  client: Latchkey,
  parameters: GetSpendingLimitsParameters = {},
): Promise<GetSpendingLimitsReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(
    client,
    'latchkey_list_spending_limits',
    body as QueryRequest<'latchkey_list_spending_limits'>,
    options,
  )
}
