import type { SendTransactionStatus } from '@latchkey/protocol'
import { CallsStatusTimeoutError } from '../../errors.ts'
import { query, sleep } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

/** Where a send stands, reduced to what an app branches on. */
export type CallsStatus = 'pending' | 'success' | 'failure'

export type GetCallsStatusParameters = {
  sendTransactionStatusId: string
  /**
   * Keep reading until the send is final (included, failed or cancelled) instead of answering
   * with the current status. @default false
   */
  wait?: boolean | undefined
  /** Between reads while waiting. @default the client's `polling.intervalMs` */
  pollingIntervalMs?: number | undefined
  /** Give up waiting (`CallsStatusTimeoutError`) after this long. @default the client's `polling.timeoutMs` */
  timeoutMs?: number | undefined
} & QueryActionOptions

export type GetCallsStatusReturnType = SendTransactionStatus & {
  status: CallsStatus
  /** No later read will change it. */
  final: boolean
}

const SUCCESS = ['INCLUDED', 'COMPLETED']
const FAILURE = ['FAILED', 'CANCELLED']

/** `success` for INCLUDED/COMPLETED, `failure` for FAILED/CANCELLED, `pending` for anything else. */
export function callsStatusOf(txStatus: string): CallsStatus {
  if (SUCCESS.includes(txStatus)) return 'success'
  if (FAILURE.includes(txStatus)) return 'failure'
  return 'pending'
}

/**
 * The status of a send (`get_send_transaction_status`): `txStatus` as the service keeps it, the
 * transaction hash (`eth.txHash`) or signature (`solana.signature`) once broadcast, an error and
 * revert chain when it failed. With `wait`, polls until the status is final.
 */
export async function getCallsStatus(
  client: Latchkey,
  parameters: GetCallsStatusParameters,
): Promise<GetCallsStatusReturnType> {
  const { wait = false, pollingIntervalMs, timeoutMs, ...rest } = parameters
  const [body, options] = await queryBody(client, rest)
  const interval = pollingIntervalMs ?? client.config.polling.intervalMs
  const limit = timeoutMs ?? client.config.polling.timeoutMs
  const deadline = Date.now() + limit
  for (;;) {
    const response = await query(client, 'get_send_transaction_status', body, options)
    const status = callsStatusOf(response.txStatus)
    const read = { ...response, status, final: status !== 'pending' }
    if (!wait || read.final) return read
    if (Date.now() + interval > deadline)
      throw new CallsStatusTimeoutError(body.sendTransactionStatusId, response.txStatus, limit)
    await sleep(interval, options.signal)
  }
}
