import { ApiError, UnavailableError } from '../kernel/base/errors.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { ServicePlugin } from '../kernel/registry.ts'
import { type L1FeePricer, provideL1Fees } from '../kernel/spending.ts'
import { ethSendRawTransaction } from './activities/ethSendRawTransaction.ts'
import { ethSendTransaction } from './activities/ethSendTransaction.ts'
import { solSendTransaction } from './activities/solSendTransaction.ts'
import { type ChainSender, NAMESPACE } from './ChainSender.ts'
import { evmSender } from './evmSender.ts'
import { L1_FEE_HEADROOM, l1DataFeeBound, operatorFeeBound } from './l1DataFee.ts'
import { SENDING_DEFAULTS, type SendingOptions, type SponsorshipOptions } from './SendingOptions.ts'
import { sendBacklogOf } from './sendBacklog.ts'
import { rpcFor, runsSendWorker, SENDING, type SendingState } from './sendingState.ts'
import { sendQueries } from './sendQueries.ts'
import { nodeFailure } from './sendRpc.ts'
import { startSendWorker } from './sendWorker.ts'
import { solanaSender } from './solanaSender.ts'
import { sponsorBalancesOf } from './sponsorBalances.ts'
import { ensureSponsors } from './sponsors.ts'

/** The name the sending wing is loaded under: a plugin of this name in `createService({ plugins })` replaces the built-in one. */
export const SENDING_WING = 'sending'

/** What the sending wing is configured with (`createService`'s `rpc`, `sending`, `sponsorship`). */
export interface SendingWingOptions {
  /** JSON-RPC endpoints by CAIP-2 chain id: sends go to these nodes. @default {} */
  rpc?: Record<string, string>
  /** How sends are broadcast and tracked (worker, timeouts, replacement bounds). @default SENDING_DEFAULTS */
  sending?: SendingOptions
  /** Gas sponsorship (sponsor accounts, delegate contracts, caps). @default none: `sponsor: true` is refused */
  sponsorship?: SponsorshipOptions
  /**
   * Senders of more chain families, by their `namespace` (one for a namespace the wing already has,
   * `eip155` or `solana`, replaces that one): the worker broadcasts and tracks sends of their chains
   * through them.
   * @default none: `eip155` and `solana` only
   */
  senders?: ChainSender[]
}

/**
 * The sending wing: `eth_send_transaction`, `sol_send_transaction` and `eth_send_raw_transaction`,
 * the queries `get_send_transaction_status` and `get_nonces`, the sponsor accounts (sealed on
 * start), the send worker that broadcasts and tracks committed sends (when `sending.worker` and
 * some node is configured), and on the admin `/readyz` the sponsors' balances and the open sends
 * (when `start` watches them: `watchSponsorBalances`, `watchSendBacklog`). It keeps its
 * options in its own state (`runtime.stateOf(SENDING)`).
 */
export function sendingWing(options: SendingWingOptions = {}): ServicePlugin<SendingState> {
  const senders = new Map<string, ChainSender>()
  for (const sender of [evmSender, solanaSender, ...(options.senders ?? [])]) {
    if (!NAMESPACE.test(sender.namespace))
      throw new Error(
        `sendingWing: sender namespace ${JSON.stringify(sender.namespace)} is not a CAIP-2 namespace ([-a-z0-9]{3,8})`,
      )
    senders.set(sender.namespace, sender)
  }
  const state: SendingState = {
    rpc: { ...options.rpc },
    sending: { ...SENDING_DEFAULTS, ...options.sending },
    ...(options.sponsorship ? { sponsorship: options.sponsorship } : {}),
    senders,
  }
  return {
    name: SENDING_WING,
    activities: {
      eth_send_raw_transaction: ethSendRawTransaction,
      eth_send_transaction: ethSendTransaction,
      sol_send_transaction: solSendTransaction,
    },
    queries: sendQueries,
    state: {
      key: SENDING,
      load: async (runtime) => {
        if (state.sponsorship) await ensureSponsors(runtime, state.sponsorship)
        provideL1Fees(runtime, l1FeePricer(runtime, state))
        return state
      },
    },
    // Sends need a node: without any, there is nothing to broadcast or track.
    start: (runtime) => (runsSendWorker(runtime) ? startSendWorker(runtime).stop : undefined),
    readiness: (runtime) => {
      const sponsors = sponsorBalancesOf(runtime)?.latest()
      const sends = sendBacklogOf(runtime)?.latest()
      return { ...(sponsors && { sponsors }), ...(sends && { sends }) }
    },
  }
}

/**
 * How `sign_transaction` learns the L1 data fee a native limit of an OP Stack or Scroll chain
 * counts (kernel/spending.ts): on a chain the wing has a node for, twice the oracle's bound for the
 * transaction's size, and the operator fee of its gas limit, as a send's (`l1DataFee.ts`); 0 on a
 * chain without an oracle. A node that does not answer is a 503: the limit cannot count what it
 * cannot price.
 */
function l1FeePricer(runtime: Runtime, state: SendingState): L1FeePricer {
  return {
    prices: (caip2) => caip2.startsWith('eip155:') && Boolean(state.rpc[caip2]),
    async feeOf(caip2, unsignedSize, gasLimit) {
      try {
        const rpc = rpcFor(runtime, caip2)
        return (
          L1_FEE_HEADROOM * (await l1DataFeeBound(runtime, rpc, caip2, unsignedSize)) +
          (await operatorFeeBound(runtime, rpc, caip2, gasLimit))
        )
      } catch (error) {
        if (error instanceof ApiError) throw error
        // Why, in the service's own words (`nodeFailure`): no URL, credential or upstream text.
        const why = nodeFailure(error, caip2, 'parameters.unsignedTransaction').message
        throw new UnavailableError({
          code: 'RPC_FAILED',
          message: `a spending limit of ${caip2}'s native unit counts the L1 data fee this transaction's sender pays there, and it could not be priced: ${why}`,
        })
      }
    },
  }
}
