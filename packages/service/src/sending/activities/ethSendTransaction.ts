import { defineActivity } from '../../kernel/registry.ts'
import {
  ETH_SEND_POLICY_FACT_FIELDS,
  ethSendPolicyFacts,
  parseEthSend,
  prepareEthSend,
  runEthSend,
} from '../ethSend.ts'

/**
 * Signs calls from `from` and sends them (V2 `calls`, or V1's one inline call): one EIP-1559
 * transaction, or, for a batch or a sponsored send, a transaction that runs the calls through the
 * chain's delegate contract (EIP-7702), paid by the organization's sponsor when `sponsor` is true.
 * The signed transaction is committed with the activity; the send worker broadcasts it after commit
 * and `get_send_transaction_status` follows it. Node reads happen in `prepare`, outside any
 * transaction and before the decision (policies read the gas and fees it fixes); nonces are
 * assigned and keys used in `run`.
 */
export const ethSendTransaction = defineActivity('eth_send_transaction', {
  parse: parseEthSend,
  prepare: prepareEthSend,
  // Policies judge a send by the gas and fees it is signed with, fixed by `prepare`.
  policyFacts: ethSendPolicyFacts,
  policyFactFields: ETH_SEND_POLICY_FACT_FIELDS,
  run: runEthSend,
})
