import type { UseQueryResult } from '@tanstack/react-query'
import { useEffect } from 'react'
import type { GetCallsStatusReturnType } from '../../core/actions/queries/getCallsStatus.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import {
  callsStatusFinalMeta,
  type GetCallsStatusQueryParameters,
  getCallsStatusQueryOptions,
} from '../../core/query/getCallsStatus.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { invalidateAfter } from './invalidateAfter.ts'
import { useLatchkey } from './useLatchkey.ts'
import { useLatchkeyQueryClient } from './useLatchkeyQueryClient.ts'

export type UseCallsStatusParameters = GetCallsStatusQueryParameters &
  ClientParameter &
  QueryParameter<GetCallsStatusReturnType>
export type UseCallsStatusReturnType = UseQueryResult<GetCallsStatusReturnType, LatchkeyError>

/**
 * The status of a send (`get_send_transaction_status`), re-read every `pollingIntervalMs` until
 * it is final: `data.status` is `pending`, then `success` or `failure`. Once it is final, what it
 * makes stale is read again (`callsStatusFinalMeta`: the spending limits, its fee now as paid).
 */
export function useCallsStatus(parameters: UseCallsStatusParameters = {}): UseCallsStatusReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  const queryClient = useLatchkeyQueryClient()
  const status = useLatchkeyQuery(client, getCallsStatusQueryOptions(client, rest), query, rest.sessionId)
  const final = status.data?.final === true
  useEffect(() => {
    // Many finished sends on one screen read the limits once: a read already under way is kept.
    if (final) void invalidateAfter(queryClient, callsStatusFinalMeta, { cancelRefetch: false })
  }, [final, queryClient])
  return status
}
