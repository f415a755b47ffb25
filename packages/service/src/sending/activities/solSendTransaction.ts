import { defineActivity } from '../../kernel/registry.ts'
import { parseSolSend, prepareSolSend, runSolSend } from '../solSend.ts'

/**
 * Signs a Solana transaction with every `signWiths` account (V1: one `signWith`) and sends it
 * through the node configured for its CAIP-2 chain. With `sponsor`, the organization's Solana
 * sponsor becomes the fee payer and signs that slot; the user's keys sign only their own. The
 * signed transaction is committed with the activity; the send worker broadcasts it after commit
 * and `get_send_transaction_status` follows it. Node reads happen in `prepare`, outside any
 * transaction; keys are used in `run`.
 */
export const solSendTransaction = defineActivity('sol_send_transaction', {
  parse: parseSolSend,
  prepare: prepareSolSend,
  run: runSolSend,
})
