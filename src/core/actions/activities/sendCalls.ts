import type { ActivityParameters, EthCall, EthSendTransactionParameters } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type SendCallsParameters = EthSendTransactionParameters & ActionOptions
export type SendCallsReturnType = {
  /** Follow it with `getCallsStatus`. */
  sendTransactionStatusId: string
  /** The `eth_send_transaction` activity that accepted the calls. */
  activityId: string
}

/** The calls `sendCalls` accepts in one batch, as the service bounds them. */
export const MAX_CALLS = 50

/**
 * Sends 1 to 50 calls from `from` on `caip2` (`eth_send_transaction`). Several calls, or
 * `sponsor: true`, run atomically as one EIP-7702 batch (all or none); with `sponsor` the
 * organization's sponsor account pays the gas. Resolves once the service has accepted the send,
 * before it is broadcast: follow `sendTransactionStatusId` with `getCallsStatus`.
 */
export async function sendCalls(
  client: Latchkey,
  parameters: SendCallsParameters,
): Promise<SendCallsReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(
      client,
      'eth_send_transaction',
      {
        ...activityParameters,
        calls: activityParameters.calls.map(plainCall),
      } as ActivityParameters<'eth_send_transaction'>,
      options,
    ),
    ({ activity, result }) => ({
      sendTransactionStatusId: result.sendTransactionStatusId,
      activityId: activity.id,
    }),
  )
}

/** Only the wire fields, without empty ones: an app's call objects may carry more (an ABI, a label). */
function plainCall(call: EthCall): EthCall {
  return {
    to: call.to,
    ...(call.value !== undefined ? { value: call.value } : {}),
    ...(call.data !== undefined && call.data !== '0x' ? { data: call.data } : {}),
  }
}
