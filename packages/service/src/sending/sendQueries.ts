import type { SendTransactionStatus } from '@latchkey/protocol'
import { findSigner } from '../domain/wallets.ts'
import { NotFoundError, UnavailableError } from '../kernel/base/errors.ts'
import { defineQuery, type QueryHandler } from '../kernel/registry.ts'
import type { SendTransactionRow } from '../kernel/store/model.ts'
import { type ChainSender, namespaceOf } from './ChainSender.ts'
import { readDelegateNonce } from './delegate/index.ts'
import { evmSender } from './evmSender.ts'
import { revertChainOf } from './revertReason.ts'
import {
  delegateCounterOf,
  nonceFloor,
  nonceIdOf,
  openHoles,
  rpcFor,
  SENDING,
  senderOf,
} from './sendingState.ts'
import { nodeFailure, RpcRefusedError } from './sendRpc.ts'
import { findSponsor } from './sponsors.ts'

const ADDRESS = /^0x[0-9a-fA-F]{40}$/

/** A failed send's revert chain: the one recorded, or (sends recorded before it was) its revert data decoded. */
const revertChainOfRow = (error: NonNullable<SendTransactionRow['error']>) =>
  error.revertChain ?? (error.revertData || error.revertReason ? revertChainOf(error.revertData) : undefined)

/**
 * A send as `get_send_transaction_status` answers it (the published response, plus the receipt):
 * its chain's part as the sender of its family renders it (a row of a family without one, as EVM's).
 */
export function renderSendStatus(
  row: SendTransactionRow,
  sender: ChainSender | undefined,
): SendTransactionStatus {
  return {
    txStatus: row.status,
    ...(sender ? sender.status?.(row) : evmSender.status!(row)),
    ...(row.error
      ? {
          txError: row.error.message,
          error: {
            message: row.error.message,
            ...(revertChainOfRow(row.error)
              ? {
                  revertChain: revertChainOfRow(row.error),
                  eth: { revertChain: revertChainOfRow(row.error) },
                }
              : {}),
            ...(row.error.solana ? { solana: row.error.solana } : {}),
          },
        }
      : {}),
  }
}

/** `get_send_transaction_status`, `get_nonces` and `latchkey_get_send_capabilities`. */
export const sendQueries: Record<string, QueryHandler> = {
  get_send_transaction_status: defineQuery('get_send_transaction_status', {
    parse: (r) => ({ sendTransactionStatusId: r.string('sendTransactionStatusId', { max: 200 }) }),
    run: async ({ store, organization, runtime }, q) => {
      const row = await store.get('sendTransactions', q.sendTransactionStatusId)
      if (!row || row.organizationId !== organization.id)
        throw new NotFoundError({
          code: 'SEND_TRANSACTION_NOT_FOUND',
          field: 'sendTransactionStatusId',
          message: `no send ${q.sendTransactionStatusId} in organization ${organization.id}`,
        })
      return renderSendStatus(row, senderOf(runtime, row))
    },
  }),
  get_nonces: defineQuery('get_nonces', {
    parse: (r) => ({
      address: r.string('address', { max: 42, pattern: ADDRESS, hint: 'a 0x-prefixed 20-byte hex address' }),
      caip2: r.string('caip2', {
        max: 24,
        pattern: /^eip155:[1-9]\d{0,15}$/,
        hint: 'an EVM CAIP-2 chain id',
      }),
      nonce: r.optBool('nonce') ?? false,
      gasStationNonce: r.optBool('gasStationNonce') ?? false,
    }),
    // The next outer nonce is the larger of the node's pending count and the service's own record
    // (sends committed but not yet broadcast count too).
    run: async ({ store, runtime, organization }, q) => {
      const rpc = rpcFor(runtime, q.caip2, 'caip2')
      // Only of an account of the organization the request names (a wallet account, through the
      // address index in any spelling, else one of its private keys): another organization's
      // counter counts the sends it committed and has not broadcast yet, and the node is not asked
      // about addresses that are none of the caller's. 404 naming `address` otherwise.
      await findSigner(store, organization.id, q.address, 'address')
      try {
        const [pending, stored, delegateNonce, delegateCounter] = await Promise.all([
          q.nonce ? (rpc('eth_getTransactionCount', [q.address, 'pending']) as Promise<string>) : undefined,
          q.nonce ? store.get('nonces', nonceIdOf(q.caip2, q.address)) : undefined,
          q.gasStationNonce ? readDelegateNonce(rpc, q.address) : undefined,
          q.gasStationNonce
            ? store.get('nonces', nonceIdOf(delegateCounterOf(q.caip2), q.address))
            : undefined,
        ])
        const chain = nonceFloor(stored, pending === undefined ? 0n : BigInt(pending))
        const recorded = stored ? BigInt(stored.next) : 0n
        // The next nonce the service gives (`takeNonce`): the lowest hole the node has not passed,
        // else the larger count; a node a block behind never answers below a nonce seen used.
        const next = openHoles(stored, chain)[0] ?? (chain > recorded ? chain : recorded)
        return {
          ...(q.nonce ? { nonce: next.toString() } : {}),
          ...(delegateNonce !== undefined
            ? { gasStationNonce: nonceFloor(delegateCounter, delegateNonce).toString() }
            : {}),
        }
      } catch (error) {
        if (error instanceof RpcRefusedError)
          throw new UnavailableError({
            code: 'RPC_FAILED',
            message: `the ${q.caip2} node refused: ${error.message}`,
          })
        throw nodeFailure(error, q.caip2, 'caip2')
      }
    },
  }),
  // What `sponsor: true` and a batch of several calls would find on each chain with a node, for the
  // caller's organization: the same conditions `prepareEthSend` and `prepareSolSend` refuse on.
  latchkey_get_send_capabilities: defineQuery('latchkey_get_send_capabilities', {
    parse: () => ({}),
    run: async ({ runtime, organization }) => {
      const { rpc, sponsorship, senders } = runtime.stateOf(SENDING)
      const chains = Object.keys(rpc)
        .filter((caip2) => senders.has(namespaceOf(caip2)))
        .sort()
        .map((caip2) => {
          if (namespaceOf(caip2) !== 'eip155') {
            const sponsor = findSponsor(runtime, organization, 'solana')
            return { caip2, gasSponsorship: sponsor !== undefined, atomicBatch: true }
          }
          const delegate = sponsorship?.delegates[caip2] !== undefined
          const sponsor = delegate && findSponsor(runtime, organization) !== undefined
          return { caip2, gasSponsorship: sponsor, atomicBatch: delegate }
        })
      return { chains }
    },
  }),
}
