import type { UseQueryResult } from '@tanstack/react-query'
import type { GetPolicyReturnType } from '../../core/actions/queries/getPolicy.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { type GetPolicyQueryParameters, getPolicyQueryOptions } from '../../core/query/getPolicy.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UsePolicyParameters = GetPolicyQueryParameters &
  ClientParameter &
  QueryParameter<GetPolicyReturnType>
export type UsePolicyReturnType = UseQueryResult<GetPolicyReturnType, LatchkeyError>

/** One policy (`get_policy`); waits for `policyId`. */
export function usePolicy(parameters: UsePolicyParameters = {}): UsePolicyReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getPolicyQueryOptions(client, rest), query, rest.sessionId)
}
