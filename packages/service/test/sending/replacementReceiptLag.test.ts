// A send whose earlier version is mined while the node's receipts lag its count, met by "nonce too
// low" at its next broadcast. (1) A replacement: a send stuck unmined is replaced (recorded
// PENDING, its first version still in the node's pool); the first version is mined before the
// replacement reaches the node, which refuses it "nonce too low"; the receipts, asked once, lag
// (a load-balanced provider whose receipt index is behind). The send ended FAILED "the node
// refused the transaction: nonce too low" at once, for good, while its first version was mined:
// an app retrying it ran its calls twice, at the sponsor's cost for a sponsored send. (2) A first
// broadcast whose process died after the node took it (the row as a crash leaves it: claimed, its
// lease run out, nothing recorded), mined, then broadcast again: "nonce too low", no receipt yet,
// and it ended FAILED with what it reserved given back. Now both wait on the version the node may
// have mined, as a send whose nonce looks taken does (`nonceTakenSeenAt`, confirmed
// `NONCE_TAKEN_CONFIRM_MS` later), and end INCLUDED once the receipt shows.
import { describe, expect, it } from 'vitest'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { type Harness, resultOf } from '../../src/testing/harness.ts'
import { byHandService, chainForFile, DEAD, PRICE, passes, receiptsLagging } from './byHand.ts'
import { endUser, erc20Call, receiptOf, sponsoredService } from './sendSupport.ts'

const chain = chainForFile()

/** How long the node's receipts lag its count: past any single look. */
const LAG_MS = 90_000

type Worker = { pass(): Promise<void> }

/**
 * The send `id` broadcast with anvil mining nothing, then replaced (its replacement recorded
 * PENDING, not yet broadcast); then the first version mined (anvil mines what its pool holds).
 * Answers the first version's hash.
 */
async function replacedThenFirstMined(h: Harness, worker: Worker, id: string): Promise<string> {
  await chain.rpc('evm_setAutomine', [false])
  try {
    await worker.pass() // broadcast: the node holds it, unmined
    const first = (await h.service.store.get('sendTransactions', id))!
    expect(first.status).toBe('BROADCASTED')
    await passes(h, worker, 1, 61_000) // stuck past replaceAfterMs: replaced
    const replaced = (await h.service.store.get('sendTransactions', id))!
    expect([replaced.status, replaced.replacements, replaced.priorHashes]).toEqual([
      'PENDING',
      1,
      [first.txHash],
    ])
    await chain.rpc('evm_mine', []) // the first version is mined, the replacement not yet sent
    return first.txHash
  } finally {
    await chain.rpc('evm_setAutomine', [true])
  }
}

/** The send `id`'s row after `LAG_MS` of passes with receipts lagging, and after ten minutes with them showing. */
async function lagThenShow(h: Harness, worker: Worker, lag: { on: boolean }, id: string) {
  lag.on = true
  await passes(h, worker, LAG_MS / 250, 250)
  const during = (await h.service.store.get('sendTransactions', id))!
  lag.on = false
  await passes(h, worker, 40, 15_000)
  const after = (await h.service.store.get('sendTransactions', id))!
  return { during, after }
}

describe('a replacement met by "nonce too low" while its first version is mined and receipts lag', {
  timeout: 120_000,
}, () => {
  it('an unsponsored send waits, then is INCLUDED as its first version, not FAILED', async () => {
    const lag = { on: false }
    const h = await byHandService(
      chain,
      receiptsLagging(() => lag.on),
    )
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      const user = await endUser(h)
      await chain.fund(user.from, 10n ** 16n)
      const id = resultOf(
        'eth_send_transaction',
        await user.send({ calls: [{ to: DEAD, value: '1' }], ...PRICE }),
      ).sendTransactionStatusId as string
      const firstHash = await replacedThenFirstMined(h, worker, id)
      expect((await receiptOf(chain, firstHash))?.status).toBe('0x1')
      const { during, after } = await lagThenShow(h, worker, lag, id)
      expect(
        {
          during: during.status,
          after: after.status,
          error: after.error?.message,
          txHash: after.txHash === firstHash ? 'first' : after.txHash,
        },
        'a mined send ended FAILED',
      ).toEqual({ during: 'BROADCASTED', after: 'INCLUDED', error: undefined, txHash: 'first' })
      const status = await h.query('get_send_transaction_status', { sendTransactionStatusId: id }, user.as)
      expect(status.body.txStatus).toBe('INCLUDED')
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })

  it("a sponsored send (its calls ran, the sponsor paid) is INCLUDED, not FAILED for the app to run again at the sponsor's cost", async () => {
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
      const id = resultOf(
        'eth_send_transaction',
        await user.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 7n)] }),
      ).sendTransactionStatusId as string
      const firstHash = await replacedThenFirstMined(h, worker, id)
      expect((await receiptOf(chain, firstHash))?.status).toBe('0x1')
      const { during, after } = await lagThenShow(h, worker, lag, id)
      expect(
        {
          during: during.status,
          after: after.status,
          error: after.error?.message,
          txHash: after.txHash === firstHash ? 'first' : after.txHash,
        },
        'a mined sponsored send ended FAILED',
      ).toEqual({ during: 'BROADCASTED', after: 'INCLUDED', error: undefined, txHash: 'first' })
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
})

describe('a first broadcast that reached the node before its process died, mined, receipts lagging', {
  timeout: 120_000,
}, () => {
  it('is INCLUDED once its receipt shows, not FAILED with what it reserved given back', async () => {
    const lag = { on: false }
    const h = await byHandService(
      chain,
      receiptsLagging(() => lag.on),
    )
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      const user = await endUser(h)
      await chain.fund(user.from, 10n ** 16n)
      const id = resultOf(
        'eth_send_transaction',
        await user.send({ calls: [{ to: DEAD, value: '1' }], ...PRICE }),
      ).sendTransactionStatusId as string
      // As a crash leaves it: claimed (its lease's end in `notBefore`), given to the node (mined),
      // nothing recorded.
      const row = (await h.service.store.get('sendTransactions', id))!
      await h.service.store.transaction(async (tx) => {
        await tx.put('sendTransactions', { ...row, notBefore: h.clock.now() + 30_000 })
      })
      await chain.rpc('eth_sendRawTransaction', [row.signedTransaction])
      expect((await receiptOf(chain, row.txHash))?.status).toBe('0x1')
      h.clock.advance(30_000) // the lease runs out
      const { during, after } = await lagThenShow(h, worker, lag, id)
      expect(
        { during: during.status, after: after.status, error: after.error?.message },
        'a mined send ended FAILED',
      ).toEqual({ during: 'BROADCASTED', after: 'INCLUDED', error: undefined })
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
})
