import type { UseQueryResult } from '@tanstack/react-query'
import type { GetPolicyEvaluationsReturnType } from '../../core/actions/queries/getPolicyEvaluations.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import {
  type GetPolicyEvaluationsQueryParameters,
  getPolicyEvaluationsQueryOptions,
} from '../../core/query/getPolicyEvaluations.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UsePolicyEvaluationsParameters = GetPolicyEvaluationsQueryParameters &
  ClientParameter &
  QueryParameter<GetPolicyEvaluationsReturnType>
export type UsePolicyEvaluationsReturnType = UseQueryResult<GetPolicyEvaluationsReturnType, LatchkeyError>

/** Policy outcomes of an activity (`get_policy_evaluations`). */
export function usePolicyEvaluations(
  parameters: UsePolicyEvaluationsParameters = {},
): UsePolicyEvaluationsReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getPolicyEvaluationsQueryOptions(client, rest), query, rest.sessionId)
}
