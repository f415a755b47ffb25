import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetPolicyEvaluationsParameters = Omit<QueryRequest<'get_policy_evaluations'>, 'organizationId'> &
  QueryActionOptions
export type GetPolicyEvaluationsReturnType = QueryResponse<'get_policy_evaluations'>

/** Policy outcomes recorded for an activity (`get_policy_evaluations`). */
export async function getPolicyEvaluations(
  client: Latchkey,
  parameters: GetPolicyEvaluationsParameters,
): Promise<GetPolicyEvaluationsReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'get_policy_evaluations', body as QueryRequest<'get_policy_evaluations'>, options)
}
