import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type SignTransactionParameters = ActivityParameters<'sign_transaction'> & ActionOptions
export type SignTransactionReturnType = ActivityResult<'sign_transaction'>

/**
 * Signs an unsigned Ethereum or Solana transaction as the `signWith` account (`sign_transaction`).
 * `signedTransaction` is hex without 0x.
 */
export async function signTransaction(
  client: Latchkey,
  parameters: SignTransactionParameters,
): Promise<SignTransactionReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'sign_transaction', activityParameters as ActivityParameters<'sign_transaction'>, options),
    ({ result }) => result,
  )
}
