// A nonce the caller names on eth_send_transaction never went through the account's counter: a
// send at it that the node refuses ends FAILED and nothing is filled. A fill of it was made from
// the same account, never expired, and was broadcast again (refused: an account holding nothing)
// or asked about (queued behind a gap: never mined) on every pass for good, so an end user's few
// requests cost the operator's node calls forever, for free. Node calls are counted, not timed;
// the worker is run by hand, one pass at a time. (A named nonce is held within `MAX_NONCE_GAP` of
// the account's next since, `unminedSendNodeCalls.test.ts`: each account's sends here stay within it.)
import { describe, expect, it } from 'vitest'
import { fillIdOf, SEND_EXPIRES_AFTER_MS } from '../../src/sending/evmSender.ts'
import { MAX_NONCE_GAP } from '../../src/sending/sendingState.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { type Harness, resultOf } from '../../src/testing/harness.ts'
import { byHandService, chainForFile, countingFetch, DEAD, PRICE, passes } from './byHand.ts'
import { endUser } from './sendSupport.ts'

/** Nonces 0..16 of a fresh account: as far past its next (0) as a caller may name. */
const SENDS = Number(MAX_NONCE_GAP) + 1
/** Nonces 5..16: behind a gap of 5, within the 16 a caller may name. */
const GAPPED = Number(MAX_NONCE_GAP) - 4
const chain = chainForFile()

/** The sends `ids`' fills as stored (undefined where none was made). */
const fillsOf = (h: Harness, ids: string[]) =>
  Promise.all(ids.map((id) => h.service.store.get('sendTransactions', fillIdOf(id))))

describe('a send at a nonce its caller named, refused by the node, is not filled', {
  timeout: 180_000,
}, () => {
  it(`${SENDS} zero-value sends of an account holding nothing, at nonces 0..${SENDS - 1}: FAILED, no fill, no node call afterwards`, async () => {
    const counting = countingFetch()
    const h = await byHandService(chain, counting.fetch)
    const user = await endUser(h) // a fresh sub-organization; its account was never funded
    expect(await chain.balance(user.from)).toBe(0n)
    const ids: string[] = []
    for (let nonce = 0; nonce < SENDS; nonce++) {
      const reply = await user.send({
        calls: [{ to: DEAD, value: '0' }],
        nonce: String(nonce),
        ...PRICE,
      })
      ids.push(resultOf('eth_send_transaction', reply).sendTransactionStatusId as string)
    }
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      await worker.pass() // each refused by the node: insufficient funds
      for (const id of ids) {
        const row = (await h.service.store.get('sendTransactions', id))!
        expect(row.status).toBe('FAILED')
        expect(row.countedNonce).toBeUndefined()
        expect(row.error?.message).toMatch(/^the node refused the transaction: insufficient funds/i)
      }
      // Without the fix: a fill each, refused and signed again every 30 s for good.
      expect((await fillsOf(h, ids)).filter(Boolean)).toHaveLength(0)
      // The account's counter never gave these nonces: it is left as it was (none).
      expect(await h.service.store.all('nonces')).toHaveLength(0)
      counting.reset()
      await passes(h, worker, 10, 31_000)
      // Nothing left to broadcast or follow (it was 192 calls in 10 passes, a month later too).
      expect(Object.fromEntries(counting.calls)).toEqual({})
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })

  it(`${GAPPED} sends of 1 ETH from an account holding 0.01, at nonces 5..${GAPPED + 4}: FAILED, no fill queued behind the gap, no node call afterwards`, async () => {
    const counting = countingFetch()
    const h = await byHandService(chain, counting.fetch)
    const user = await endUser(h)
    // Enough for a fill's 21,000 gas (which the node would take into its queue behind nonces
    // 0..4, never mined), never for a 1 ETH transfer.
    await chain.fund(user.from, 10n ** 16n)
    const ids: string[] = []
    for (let i = 0; i < GAPPED; i++) {
      const reply = await user.send({
        calls: [{ to: DEAD, value: String(10n ** 18n) }],
        nonce: String(5 + i),
        ...PRICE,
      })
      ids.push(resultOf('eth_send_transaction', reply).sendTransactionStatusId as string)
    }
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      await worker.pass() // refused: insufficient funds
      for (const id of ids)
        expect((await h.service.store.get('sendTransactions', id))!.error?.message).toMatch(
          /insufficient funds/i,
        )
      await worker.pass()
      // Without the fix: a fill each queued by the node, each asked about in 4 versions every pass
      // (250 ms) for good (64 of them: about 1,280 calls a second a month later).
      expect((await fillsOf(h, ids)).filter(Boolean)).toHaveLength(0)
      counting.reset()
      await passes(h, worker, 5, 61_000)
      h.clock.advance(SEND_EXPIRES_AFTER_MS)
      await worker.pass()
      expect(Object.fromEntries(counting.calls)).toEqual({})
      // The account paid nothing: nothing at its nonces was mined or queued.
      expect(await chain.balance(user.from)).toBe(10n ** 16n)
      expect(BigInt((await chain.rpc('eth_getTransactionCount', [user.from, 'pending'])) as string)).toBe(0n)
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
})
