import type { UseQueryResult } from '@tanstack/react-query'
import type { GetCallsStatusReturnType } from '../../core/actions/queries/getCallsStatus.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import {
  type GetCallsStatusQueryParameters,
  getCallsStatusQueryOptions,
} from '../../core/query/getCallsStatus.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCallsStatusParameters = GetCallsStatusQueryParameters &
  ClientParameter &
  QueryParameter<GetCallsStatusReturnType>
export type UseCallsStatusReturnType = UseQueryResult<GetCallsStatusReturnType, LatchkeyError>

/**
 * The status of a send (`get_send_transaction_status`), re-read every `pollingIntervalMs` until
 * it is final: `data.status` is `pending`, then `success` or `failure`.
 */
export function useCallsStatus(parameters: UseCallsStatusParameters = {}): UseCallsStatusReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getCallsStatusQueryOptions(client, rest), query, rest.sessionId)
}
