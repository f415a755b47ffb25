import type { UseQueryResult } from '@tanstack/react-query'
import type { GetSpendingLimitsReturnType } from '../../core/actions/queries/getSpendingLimits.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import {
  type GetSpendingLimitsQueryParameters,
  getSpendingLimitsQueryOptions,
} from '../../core/query/getSpendingLimits.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseSpendingLimitsParameters = GetSpendingLimitsQueryParameters &
  ClientParameter &
  QueryParameter<GetSpendingLimitsReturnType>
export type UseSpendingLimitsReturnType = UseQueryResult<GetSpendingLimitsReturnType, LatchkeyError>

/**
 * Spending limits of the organization (`latchkey_list_spending_limits`) with each window's
 * `used` and `remaining`; refreshed after every limit change and every signature or send.
 */
export function useSpendingLimits(parameters: UseSpendingLimitsParameters = {}): UseSpendingLimitsReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getSpendingLimitsQueryOptions(client, rest), query, rest.sessionId)
}
