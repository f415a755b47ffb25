import type { UseQueryResult } from '@tanstack/react-query'
import type { GetMfaPoliciesReturnType } from '../../core/actions/queries/getMfaPolicies.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import {
  type GetMfaPoliciesQueryParameters,
  getMfaPoliciesQueryOptions,
} from '../../core/query/getMfaPolicies.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseMfaPoliciesParameters = GetMfaPoliciesQueryParameters &
  ClientParameter &
  QueryParameter<GetMfaPoliciesReturnType>
export type UseMfaPoliciesReturnType = UseQueryResult<GetMfaPoliciesReturnType, LatchkeyError>

/** The MFA policies on a user (the session's user by default), lowest `order` first. */
export function useMfaPolicies(parameters: UseMfaPoliciesParameters = {}): UseMfaPoliciesReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getMfaPoliciesQueryOptions(client, rest), query, rest.sessionId)
}
