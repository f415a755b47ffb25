import type { UseQueryResult } from '@tanstack/react-query'
import type { GetMfaFactorsReturnType } from '../../core/actions/queries/getMfaFactors.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import {
  type GetMfaFactorsQueryParameters,
  getMfaFactorsQueryOptions,
} from '../../core/query/getMfaFactors.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseMfaFactorsParameters = GetMfaFactorsQueryParameters &
  ClientParameter &
  QueryParameter<GetMfaFactorsReturnType>
export type UseMfaFactorsReturnType = UseQueryResult<GetMfaFactorsReturnType, LatchkeyError>

/** A user's TOTP factors and how many unused recovery codes they hold (the session's user by default). */
export function useMfaFactors(parameters: UseMfaFactorsParameters = {}): UseMfaFactorsReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getMfaFactorsQueryOptions(client, rest), query, rest.sessionId)
}
