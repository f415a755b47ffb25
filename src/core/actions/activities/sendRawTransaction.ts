import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type SendRawTransactionParameters = ActivityParameters<'eth_send_raw_transaction'> & ActionOptions
export type SendRawTransactionReturnType = ActivityResult<'eth_send_raw_transaction'>

/** Broadcasts a signed Ethereum transaction to the chain named by `caip2` (`eth_send_raw_transaction`). */
export async function sendRawTransaction(
  client: Latchkey,
  parameters: SendRawTransactionParameters,
): Promise<SendRawTransactionReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(
      client,
      'eth_send_raw_transaction',
      activityParameters as ActivityParameters<'eth_send_raw_transaction'>,
      options,
    ),
    ({ result }) => result,
  )
}
