// A replacement the node refuses for a reason other than its price, while the version it replaces
// waits in the node's pool: here "insufficient funds for gas * price + value", its raised fee
// putting its most cost past what its sender holds (an account drained by another of its sends in
// flight, a sponsor running low). The send ended FAILED ("the node refused the transaction: …")
// and a fill was made of its nonce, while its first version stayed in the pool and was mined
// later: an app told it failed retried it and ran its calls twice (for a sponsored send, at the
// sponsor's cost). Now the send goes back to waiting on the version the node holds (its hash, its
// signed transaction and fees again the row's; its replacement tried again later), and ends
// INCLUDED when it is mined. anvil mines nothing until the test says.
import { describe, expect, it } from 'vitest'
import { fillIdOf } from '../../src/sending/evmSender.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import { type Harness, resultOf } from '../../src/testing/harness.ts'
import { byHandService, chainForFile, DEAD, GWEI, PRICE, passes } from './byHand.ts'
import { endUser, erc20Call, receiptOf, sponsoredService } from './sendSupport.ts'

const chain = chainForFile()

type Worker = { pass(): Promise<void> }

/**
 * The send `id` broadcast with anvil mining nothing, `drain` run (its sender left holding too
 * little for a raised fee), its replacement refused, and then the first version mined. Answers the
 * row while the first version waits in the pool and once it is mined, and the first version.
 */
async function refusedReplacement(h: Harness, worker: Worker, id: string, drain: () => Promise<void>) {
  await chain.rpc('evm_setAutomine', [false])
  try {
    await worker.pass() // broadcast: the node holds it, unmined
    const first = (await h.service.store.get('sendTransactions', id))!
    expect(first.status).toBe('BROADCASTED')
    await drain()
    await passes(h, worker, 1, 61_000) // stuck past replaceAfterMs: replaced
    expect((await h.service.store.get('sendTransactions', id))!.replacements).toBe(1)
    // The replacement refused: the send waits on its first version again.
    await passes(h, worker, 1, 61_000)
    const waiting = (await h.service.store.get('sendTransactions', id))!
    // The worker goes on: its replacement is tried again each replace_after_ms (refused again, the
    // send back on its first version each time: refusedReplacementRetried.test.ts), never FAILED.
    await passes(h, worker, 9, 61_000)
    await chain.rpc('evm_mine', []) // the node mines what its pool holds: the first version
    expect((await receiptOf(chain, first.txHash))?.status).toBe('0x1')
    // An unsponsored send that can only wait is looked at a quarter of its age later, at most 5 min.
    await passes(h, worker, 6, 60_000)
    const after = (await h.service.store.get('sendTransactions', id))!
    return { first, waiting, after }
  } finally {
    await chain.rpc('evm_setAutomine', [true])
  }
}

/** What the test compares: statuses, errors, whether the row follows the first version, a fill. */
async function summary(h: Harness, id: string, rows: Awaited<ReturnType<typeof refusedReplacement>>) {
  const { first, waiting, after } = rows
  return {
    waiting: waiting.status,
    waitingError: waiting.error?.message,
    waitingVersion: {
      txHash: waiting.txHash === first.txHash ? 'first' : waiting.txHash,
      signedTransaction: waiting.signedTransaction === first.signedTransaction ? 'first' : 'other',
      fees: waiting.fees,
      priorHashes: waiting.priorHashes,
    },
    after: after.status,
    afterError: after.error?.message,
    txHash: after.txHash === first.txHash ? 'first' : after.txHash,
    fill: (await h.service.store.get('sendTransactions', fillIdOf(id)))?.status,
  }
}

describe('a replacement refused for insufficient funds while its first version waits in the pool', {
  timeout: 120_000,
}, () => {
  it('an unsponsored send keeps waiting on its first version and is INCLUDED when that is mined', async () => {
    const h = await byHandService(chain, fetch)
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      const user = await endUser(h)
      // Enough for 1 wei and 21,000 gas at 2 gwei, not at the 2.5 gwei of a replacement.
      await chain.fund(user.from, 21_000n * 2n * GWEI + 10n ** 12n)
      const id = resultOf(
        'eth_send_transaction',
        await user.send({ calls: [{ to: DEAD, value: '1' }], ...PRICE }),
      ).sendTransactionStatusId as string
      const rows = await refusedReplacement(h, worker, id, async () => {})
      expect(await summary(h, id, rows), 'a send FAILED while its first version was mined').toEqual({
        waiting: 'BROADCASTED',
        waitingError: undefined,
        waitingVersion: {
          txHash: 'first',
          signedTransaction: 'first',
          fees: rows.first.fees,
          priorHashes: undefined,
        },
        after: 'INCLUDED',
        afterError: undefined,
        txHash: 'first',
        fill: undefined,
      })
      const status = await h.query('get_send_transaction_status', { sendTransactionStatusId: id }, user.as)
      expect(status.body.txStatus).toBe('INCLUDED')
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })

  it('a sponsored send whose sponsor runs low keeps waiting on its first version, INCLUDED once mined, no fill', async () => {
    const h = await sponsoredService(chain, {}, { worker: false, pollIntervalMs: 250 })
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      const user = await endUser(h)
      const id = resultOf(
        'eth_send_transaction',
        await user.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 7n)] }),
      ).sendTransactionStatusId as string
      const rows = await refusedReplacement(h, worker, id, async () => {
        // The sponsor is left holding the first version's most cost and a little more.
        const { fees } = (await h.service.store.get('sendTransactions', id))!
        const most = BigInt(fees!.gasLimit) * BigInt(fees!.maxFeePerGas)
        await chain.fund(sponsorAddress(h.service.runtime)!, most + most / 10n)
      })
      expect(await summary(h, id, rows), 'a sponsored send FAILED while its first version was mined').toEqual(
        {
          waiting: 'BROADCASTED',
          waitingError: undefined,
          waitingVersion: {
            txHash: 'first',
            signedTransaction: 'first',
            fees: rows.first.fees,
            priorHashes: undefined,
          },
          after: 'INCLUDED',
          afterError: undefined,
          txHash: 'first',
          fill: undefined,
        },
      )
      expect(await chain.tokenBalance(DEAD)).toBeGreaterThanOrEqual(7n)
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
})
