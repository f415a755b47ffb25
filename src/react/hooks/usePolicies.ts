import type { UseQueryResult } from '@tanstack/react-query'
import type { GetPoliciesReturnType } from '../../core/actions/queries/getPolicies.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { type GetPoliciesQueryParameters, getPoliciesQueryOptions } from '../../core/query/getPolicies.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UsePoliciesParameters = GetPoliciesQueryParameters &
  ClientParameter &
  QueryParameter<GetPoliciesReturnType>
export type UsePoliciesReturnType = UseQueryResult<GetPoliciesReturnType, LatchkeyError>

/** Policies of the organization (`list_policies`). */
export function usePolicies(parameters: UsePoliciesParameters = {}): UsePoliciesReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getPoliciesQueryOptions(client, rest), query, rest.sessionId)
}
