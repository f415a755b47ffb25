import {
  type SendCallsParameters,
  type SendCallsReturnType,
  sendCalls,
} from '../actions/activities/sendCalls.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `sendCalls`; it makes nothing stale (follow the send with `getCallsStatusQueryOptions`). */
export function sendCallsMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'sendCalls'] as const,
    mutationFn: (variables: SendCallsParameters): Promise<SendCallsReturnType> =>
      sendCalls(client, variables),
    meta: { invalidates: ['spendingLimits'] } satisfies LatchkeyMutationMeta,
  }
}
