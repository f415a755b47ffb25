import type { EthSendTransactionParameters } from '@latchkey/protocol'
import type { Latchkey } from '../../types.ts'
import type { ActionOptions } from '../options.ts'
import { type SendCallsReturnType, sendCalls } from './sendCalls.ts'

/** One Ethereum call: `to`, `value` in wei (decimal string), `data` hex. */
export type SendEthereumTransactionParameters = Omit<EthSendTransactionParameters, 'calls'> & {
  to: string
  value?: string | undefined
  data?: string | undefined
}

export type SendTransactionParameters = SendEthereumTransactionParameters & ActionOptions
export type SendTransactionReturnType = SendCallsReturnType

/**
 * Sends one Ethereum transaction (`eth_send_transaction` with one call). With `sponsor: true` the
 * organization's sponsor account pays the gas through an EIP-7702 batch. Resolves once the service
 * has accepted it; follow `sendTransactionStatusId` with `getCallsStatus`. (Solana sends wait for
 * the service's `sol_send_transaction`; sign with `signTransaction` and broadcast meanwhile.)
 */
export async function sendTransaction(
  client: Latchkey,
  parameters: SendTransactionParameters,
): Promise<SendTransactionReturnType> {
  const { to, value, data, ...rest } = parameters
  return sendCalls(client, { ...rest, calls: [{ to, value, data }] })
}
