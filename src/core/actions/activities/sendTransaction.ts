import type { EthSendTransactionParameters, SolSendTransactionParameters } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import { type SendCallsReturnType, sendCalls } from './sendCalls.ts'

/** One Ethereum call: `to`, `value` in wei (decimal string), `data` hex. */
export type SendEthereumTransactionParameters = Omit<EthSendTransactionParameters, 'calls'> & {
  to: string
  value?: string | undefined
  data?: string | undefined
}

/** A Solana wire transaction (hex) with empty signature slots that the `signWiths` accounts fill. */
export type SendSolanaTransactionParameters = Omit<SolSendTransactionParameters, 'signWiths'> &
  ({ signWith: string; signWiths?: undefined } | { signWiths: string[]; signWith?: undefined })

export type SendTransactionParameters = (
  | SendEthereumTransactionParameters
  | SendSolanaTransactionParameters
) &
  ActionOptions
export type SendTransactionReturnType = SendCallsReturnType

const isSolana = (p: SendTransactionParameters): p is SendSolanaTransactionParameters & ActionOptions =>
  'unsignedTransaction' in p

/**
 * Sends one transaction: an Ethereum call (`eth_send_transaction` with one call) or a Solana
 * transaction (`sol_send_transaction`). With `sponsor: true` the organization's sponsor account
 * pays (Ethereum: gas, through an EIP-7702 batch; Solana: the fee, as fee payer). Resolves once
 * the service has accepted it; follow `sendTransactionStatusId` with `getCallsStatus`.
 */
export async function sendTransaction(
  client: Latchkey,
  parameters: SendTransactionParameters,
): Promise<SendTransactionReturnType> {
  if (!isSolana(parameters)) {
    const { to, value, data, ...rest } = parameters
    return sendCalls(client, { ...rest, calls: [{ to, value, data }] })
  }
  const [{ signWith, signWiths, ...rest }, options] = splitOptions(parameters)
  return thenOrResume(
    submit(
      client,
      'sol_send_transaction',
      { ...rest, signWiths: signWiths ?? [signWith as string] },
      options,
    ),
    ({ activity, result }) => ({
      sendTransactionStatusId: result.sendTransactionStatusId,
      activityId: activity.id,
    }),
  )
}
