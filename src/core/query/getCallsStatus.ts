import {
  type GetCallsStatusParameters,
  type GetCallsStatusReturnType,
  getCallsStatus,
} from '../actions/queries/getCallsStatus.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, queryKeyOf, sessionScope } from './utils.ts'

/**
 * What a send makes stale once it is final, as a mutation names what it makes stale: its native
 * spending limits then keep the fee it paid, no longer the most it could have cost.
 */
export const callsStatusFinalMeta = {
  invalidates: ['spendingLimits'],
} as const satisfies LatchkeyMutationMeta

export type GetCallsStatusQueryParameters = Partial<
  Omit<GetCallsStatusParameters, 'wait' | 'timeoutMs' | 'pollingIntervalMs'>
> & {
  /** Re-read this often until the send is final; `false` reads once. @default the client's `polling.intervalMs` */
  pollingIntervalMs?: number | false | undefined
}

export const getCallsStatusQueryKey = (
  parameters: Omit<GetCallsStatusQueryParameters, 'organizationId' | 'sessionId' | 'pollingIntervalMs'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('callsStatus', parameters)
export type GetCallsStatusQueryKey = ReturnType<typeof getCallsStatusQueryKey>

/**
 * Query options for `getCallsStatus`: disabled until a session and `sendTransactionStatusId`
 * exist; refetches every `pollingIntervalMs` while the send is pending and stops once it is final.
 */
export function getCallsStatusQueryOptions(client: Latchkey, parameters: GetCallsStatusQueryParameters) {
  const { pollingIntervalMs, ...rest } = parameters
  const { scope, enabled } = sessionScope(client, rest.sessionId)
  const interval = pollingIntervalMs ?? client.config.polling.intervalMs
  return {
    queryKey: getCallsStatusQueryKey({ ...scope, ...rest, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetCallsStatusReturnType> =>
      getCallsStatus(client, {
        ...rest,
        sessionId: scope.sessionId ?? undefined,
        signal,
      } as GetCallsStatusParameters),
    enabled: enabled && rest.sendTransactionStatusId !== undefined,
    refetchInterval: (query: { state: { data?: GetCallsStatusReturnType | undefined } }) =>
      query.state.data?.final ? false : interval,
  }
}
