// A send whose nonce another transaction of its sender took. An end user relays through
// `eth_send_raw_transaction` a transfer at its sender's next nonce, then sends another transaction
// at that nonce straight to a node at a higher price, which is mined. Before: the worker saw its
// sender's mined count pass the send's nonce with no receipt of any version, so none of them could
// ever be mined, yet only a fill was ended for it: any other send stayed BROADCASTED for its 3
// hours (holding one of its sub-organization's 64 open sends, its status and webhook wrong), each
// backed-off look asking every version's receipt, `eth_getTransactionByHash`, and a rebroadcast the
// node refused (some 310 node calls), then ended "expired: … a node that still holds it may mine
// it", which was false. Now: the look that finds the count past its nonce and no version mined
// records it (`nonceTakenSeenAt`); one `NONCE_TAKEN_CONFIRM_MS` later that finds the same (its
// receipts asked again) ends it FAILED saying its nonce was taken, no longer asked about, never
// replaced or given to the node again meanwhile. A node whose receipts lag its count (a load
// balancer a block behind), or a count that goes back (a reorg), does not end a send that is mined.
// Node calls are counted; the worker is run by hand, the service's clock moved.
import { addr } from 'micro-eth-signer'
import { serializeTransaction } from 'viem'
import { describe, expect, it } from 'vitest'
import { fillIdOf, NONCE_TAKEN_CONFIRM_MS, SEND_EXPIRES_AFTER_MS } from '../../src/sending/evmSender.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { limitedSubOrganization, resultOf } from '../../src/testing/harness.ts'
import {
  byHandService,
  CAIP2,
  chainForFile,
  countingFetch,
  DEAD,
  GWEI,
  nodeAnswer,
  PRICE,
  passes,
  receiptsLagging,
  signedTransfer,
} from './byHand.ts'
import { endUser, receiptOf } from './sendSupport.ts'

/** The worker's passes in the confirming look's window, ms of the harness's clock apart (the send is not due between them). */
const STEP = 5_000

const chain = chainForFile()
const total = (calls: Map<string, number>) => [...calls.values()].reduce((sum, n) => sum + n, 0)

describe('a send whose nonce another transaction took', { timeout: 300_000 }, () => {
  it("ends FAILED saying so ten minutes after its sender's mined count passed its nonce with no version mined, and is asked about no more", async () => {
    const counting = countingFetch()
    const h = await byHandService(chain, counting.fetch)
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      const user = await endUser(h)
      const key = addr.random()
      await chain.fund(key.address, 10n ** 17n)
      const nonce = BigInt((await chain.rpc('eth_getTransactionCount', [key.address, 'latest'])) as string)
      const mine = signedTransfer(key.privateKey, nonce, 2n * GWEI, GWEI)
      await chain.rpc('evm_setAutomine', [false])
      let id: string
      try {
        h.clock.set(Date.now())
        const reply = await h.submit(
          'eth_send_raw_transaction',
          { signedTransaction: mine, caip2: CAIP2 },
          user.as,
        )
        const { transactionHash } = resultOf('eth_send_raw_transaction', reply) as { transactionHash: string }
        id = (await h.service.store.all('sendTransactions')).find((row) => row.txHash === transactionHash)!.id
        await worker.pass() // broadcast: the node holds it, unmined
        expect((await h.service.store.get('sendTransactions', id))!.status).toBe('BROADCASTED')
        // The same key's other transaction at that nonce, at a higher price, straight to the node; mined.
        await chain.rpc('eth_sendRawTransaction', [
          signedTransfer(key.privateKey, nonce, 4n * GWEI, 2n * GWEI),
        ])
        await chain.rpc('evm_mine', [])
      } finally {
        await chain.rpc('evm_setAutomine', [true])
      }
      expect(BigInt((await chain.rpc('eth_getTransactionCount', [key.address, 'latest'])) as string)).toBe(
        nonce + 1n,
      )
      const start = h.clock.now()
      counting.reset()
      // The first look finds its nonce taken: recorded, looked at again ten minutes later, nothing else.
      await passes(h, worker, 1, 250)
      const first = (await h.service.store.get('sendTransactions', id))!
      expect(first.status).toBe('BROADCASTED')
      expect(first.nonceTakenSeenAt).toBe(h.clock.now())
      expect(Object.fromEntries(counting.calls)).toEqual({
        eth_getTransactionCount: 1,
        eth_getTransactionReceipt: 1,
      })
      // Not asked about in the ten minutes before that look.
      await passes(h, worker, NONCE_TAKEN_CONFIRM_MS / STEP - 1, STEP)
      expect(total(counting.calls)).toBe(2)
      expect((await h.service.store.get('sendTransactions', id))!.status).toBe('BROADCASTED')
      await passes(h, worker, 1, STEP)
      const ended = (await h.service.store.get('sendTransactions', id))!
      expect(ended.status).toBe('FAILED')
      expect(ended.error?.message).toMatch(
        new RegExp(
          `^nonce ${nonce} of ${key.address} was taken by another transaction .*no version of this send was mined`,
          'i',
        ),
      )
      expect(h.clock.now() - first.nonceTakenSeenAt!).toBe(NONCE_TAKEN_CONFIRM_MS)
      // Its status says so.
      const status = await h.query('get_send_transaction_status', { sendTransactionStatusId: id }, user.as)
      expect(status.body).toMatchObject({ txStatus: 'FAILED' })
      // To what was its expiry: never asked about again, never replaced or given to the node again.
      await passes(
        h,
        worker,
        Math.ceil((start + SEND_EXPIRES_AFTER_MS + 4000 - h.clock.now()) / 60_000),
        60_000,
      )
      expect(Object.fromEntries(counting.calls)).toEqual({
        eth_getTransactionCount: 2,
        eth_getTransactionReceipt: 2,
      })
      const last = (await h.service.store.get('sendTransactions', id))!
      expect(last.error?.message).toBe(ended.error?.message)
      expect(last.replacements).toBe(0)
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })

  it("the account's own send at the nonce of its service-signed send under a spending limit: FAILED, never replaced meanwhile, what it reserved still counted", async () => {
    const counting = countingFetch()
    const h = await byHandService(chain, counting.fetch)
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      const limited = await limitedSubOrganization(h, { amount: String(10n ** 17n), caip2: CAIP2 })
      await chain.fund(limited.from, 10n ** 17n)
      const used = async () =>
        BigInt(
          (await h.query('latchkey_list_spending_limits', {}, limited)).body.spendingLimits.find(
            (limit: { spendingLimitId: string }) => limit.spendingLimitId === limited.spendingLimitId,
          ).used,
        )
      await chain.rpc('evm_setAutomine', [false])
      let id: string
      let nonce: bigint
      try {
        h.clock.set(Date.now())
        const reply = await h.submit(
          'eth_send_transaction',
          { from: limited.from, caip2: CAIP2, calls: [{ to: DEAD, value: '5' }], ...PRICE },
          limited,
        )
        id = resultOf('eth_send_transaction', reply).sendTransactionStatusId as string
        await worker.pass() // broadcast: the node holds it, unmined
        const row = (await h.service.store.get('sendTransactions', id))!
        expect(row.status).toBe('BROADCASTED')
        nonce = BigInt(row.nonce!)
        // The account signs another transaction at that nonce (sign_transaction, counted too) and
        // sends it straight to the node at a higher price; mined.
        const unsigned = serializeTransaction({
          type: 'eip1559',
          chainId: 31337,
          nonce: Number(nonce),
          to: DEAD,
          value: 6n,
          gas: 21_000n,
          maxFeePerGas: 4n * GWEI,
          maxPriorityFeePerGas: 2n * GWEI,
        })
        const { signedTransaction } = resultOf(
          'sign_transaction',
          await h.submit(
            'sign_transaction',
            { signWith: limited.from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned },
            limited,
          ),
        ) as { signedTransaction: string }
        await chain.rpc('eth_sendRawTransaction', [signedTransaction])
        await chain.rpc('evm_mine', [])
      } finally {
        await chain.rpc('evm_setAutomine', [true])
      }
      const before = await used()
      expect(before).toBeGreaterThan(11n)
      counting.reset()
      // Its replacement falls due (60 s after its broadcast) within the ten minutes it waits: not made.
      await passes(h, worker, NONCE_TAKEN_CONFIRM_MS / STEP + 1, STEP)
      const ended = (await h.service.store.get('sendTransactions', id))!
      expect(ended.status).toBe('FAILED')
      expect(ended.error?.message).toMatch(
        new RegExp(`^nonce ${nonce} of ${limited.from} was taken by another transaction`, 'i'),
      )
      expect(ended.replacements).toBe(0)
      expect(Object.fromEntries(counting.calls)).toEqual({
        eth_getTransactionCount: 2,
        eth_getTransactionReceipt: 2,
      })
      // Signed and broadcast: what it reserved stays counted (anything signed counts).
      expect(await used()).toBe(before)
      // No fill of its nonce: it is used.
      expect(await h.service.store.get('sendTransactions', fillIdOf(id))).toBeUndefined()
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })

  it('a send that is mined is not ended as taken when the receipts lag the count, or the count goes back', async () => {
    const counting = countingFetch()
    let receiptsLag = false
    let count: string | undefined
    const node = receiptsLagging(
      () => receiptsLag,
      async (input, init) => {
        const body = JSON.parse(String(init?.body)) as { id?: number; method: string }
        if (count !== undefined && body.method === 'eth_getTransactionCount')
          return nodeAnswer(body.id, count)
        return counting.fetch(input, init)
      },
    )
    const h = await byHandService(chain, node)
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      const user = await endUser(h)
      await chain.fund(user.from, 10n ** 16n)
      const reply = await user.send({ calls: [{ to: DEAD, value: '1' }], ...PRICE })
      const id = resultOf('eth_send_transaction', reply).sendTransactionStatusId as string
      await worker.pass() // broadcast, then mined (anvil mines each transaction)
      const { nonce, txHash } = (await h.service.store.get('sendTransactions', id))!
      expect(await receiptOf(chain, txHash)).not.toBeNull()
      // A node whose count shows it mined, its receipt not yet.
      receiptsLag = true
      await passes(h, worker, 1, 250)
      const seen = (await h.service.store.get('sendTransactions', id))!
      expect(seen.status).toBe('BROADCASTED')
      expect(seen.nonceTakenSeenAt).toBe(h.clock.now())
      // Ten minutes later the count answered is back at its nonce (a reorg, a node a block behind):
      // what was seen is forgotten, the send followed as before.
      count = `0x${BigInt(nonce!).toString(16)}`
      await passes(h, worker, NONCE_TAKEN_CONFIRM_MS / STEP, STEP)
      const back = (await h.service.store.get('sendTransactions', id))!
      expect(back.status).toBe('BROADCASTED')
      expect(back.nonceTakenSeenAt).toBeUndefined()
      // The count past it again, the receipt still lagging: seen again, not ended.
      count = undefined
      await passes(h, worker, 2, 250)
      expect((await h.service.store.get('sendTransactions', id))!.nonceTakenSeenAt).toBeDefined()
      // The receipt shows before the confirming look: INCLUDED.
      receiptsLag = false
      await passes(h, worker, NONCE_TAKEN_CONFIRM_MS / STEP, STEP)
      const mined = (await h.service.store.get('sendTransactions', id))!
      expect(mined.status).toBe('INCLUDED')
      expect(mined.receipt?.status).toBe('success')
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
})
