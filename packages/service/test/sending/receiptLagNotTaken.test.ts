// A mined send on a node whose receipts lag its count (a load-balanced provider whose receipt
// index is behind, a node re-indexing): the first look finds its sender's mined count past its
// nonce and no receipt, and records it (`nonceTakenSeenAt`); the confirming look came a minute
// later (`NONCE_TAKEN_CONFIRM_MS`), still found no receipt and ended the send FAILED "nonce N …
// was taken by another transaction … no version of this send was mined", for good: nothing asked
// again, so once the node showed the receipt the send stayed FAILED, its webhook said so, and an
// app retrying it ran its calls twice (for a sponsored send, at the sponsor's cost). Found by the
// audit of 1c80e925. The confirming look now comes ten minutes later: receipts lagging 90 s (past
// the old minute), raw and sponsored, end INCLUDED once they show. Fails with a one-minute window.
import { addr } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { type Harness, resultOf } from '../../src/testing/harness.ts'
import {
  byHandService,
  CAIP2,
  chainForFile,
  DEAD,
  GWEI,
  passes,
  receiptsLagging,
  signedTransfer,
} from './byHand.ts'
import { endUser, erc20Call, receiptOf, sponsoredService } from './sendSupport.ts'

const chain = chainForFile()

/** How long the node's receipts lag its count: past the minute the confirming look used to wait. */
const LAG_MS = 90_000

/**
 * The mined send `id`'s row after its receipts lag for `LAG_MS` (`during`) and then after ten
 * minutes of the worker's passes with its receipt showing (`after`).
 */
async function lagThenShow(h: Harness, worker: { pass(): Promise<void> }, lag: { on: boolean }, id: string) {
  lag.on = true
  await passes(h, worker, LAG_MS / 250, 250)
  const during = (await h.service.store.get('sendTransactions', id))!
  // The receipt shows now; the worker keeps passing (ten minutes of its passes).
  lag.on = false
  await passes(h, worker, 40, 15_000)
  const after = (await h.service.store.get('sendTransactions', id))!
  return { during, after }
}

describe('a mined send whose receipt lags past the confirming look', { timeout: 120_000 }, () => {
  it('is INCLUDED once its receipt shows, not FAILED as "nonce taken" for good', async () => {
    const lag = { on: false }
    const h = await byHandService(
      chain,
      receiptsLagging(() => lag.on),
    )
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      const user = await endUser(h)
      const key = addr.random()
      await chain.fund(key.address, 10n ** 17n)
      const nonce = BigInt((await chain.rpc('eth_getTransactionCount', [key.address, 'latest'])) as string)
      const signed = signedTransfer(key.privateKey, nonce, 2n * GWEI, GWEI)
      h.clock.set(Date.now())
      const reply = await h.submit(
        'eth_send_raw_transaction',
        { signedTransaction: signed, caip2: CAIP2 },
        user.as,
      )
      const { transactionHash } = resultOf('eth_send_raw_transaction', reply) as { transactionHash: string }
      const id = (await h.service.store.all('sendTransactions')).find(
        (row) => row.txHash === transactionHash,
      )!.id
      await worker.pass() // broadcast; anvil mines it at once
      expect(await receiptOf(chain, transactionHash)).not.toBeNull()
      const { during, after } = await lagThenShow(h, worker, lag, id)
      const status = await h.query('get_send_transaction_status', { sendTransactionStatusId: id }, user.as)
      expect(
        {
          during: during.status,
          after: after.status,
          error: after.error?.message,
          api: status.body.txStatus,
        },
        'mined send left FAILED as "nonce taken"',
      ).toMatchObject({ after: 'INCLUDED', api: 'INCLUDED' })
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
})

describe('a mined sponsored send whose receipt lags past the confirming look', { timeout: 120_000 }, () => {
  it('is INCLUDED once its receipt shows (its calls ran, the sponsor paid), not FAILED for good', async () => {
    const lag = { on: false }
    const h = await sponsoredService(
      chain,
      {},
      { worker: false, pollIntervalMs: 250 },
      { fetch: receiptsLagging(() => lag.on) },
    )
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      const user = await endUser(h)
      const reply = await user.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 7n)] })
      const id = resultOf('eth_send_transaction', reply).sendTransactionStatusId as string
      await worker.pass() // broadcast; anvil mines it at once
      const { txHash } = (await h.service.store.get('sendTransactions', id))!
      const receipt = (await receiptOf(chain, txHash)) as { status: string } | null
      expect(receipt?.status).toBe('0x1')
      const { during, after } = await lagThenShow(h, worker, lag, id)
      expect(
        { during: during.status, after: after.status, error: after.error?.message },
        'mined sponsored send left FAILED as "nonce taken"',
      ).toMatchObject({ after: 'INCLUDED', error: undefined })
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
})
