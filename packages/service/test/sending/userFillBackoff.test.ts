// A fill of an end user's own account that the node keeps refusing (an account holding nothing) is
// signed and broadcast again less and less often: at most every FILL_REFUSED_RETRY_AT_MOST_MS, a
// few dozen node calls over its 3 hours before it expires. Before, it was signed again every 30 s
// (eth_sendRawTransaction refused, then the block and the tip it is signed at: 3 calls), some 360
// times: 64 such fills of one sub-organization (its open sends) cost the operator's node ~23,000
// calls an hour for 3 hours, for free. Once the account can pay, the fill is still mined within
// FILL_REFUSED_RETRY_AT_MOST_MS. The worker is run by hand, the service's clock moved between passes.

import { describe, expect, it } from 'vitest'
import {
  FILL_REFUSED_RETRY_AT_MOST_MS,
  fillIdOf,
  SEND_EXPIRES_AFTER_MS,
} from '../../src/sending/evmSender.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { type Harness, resultOf } from '../../src/testing/harness.ts'
import {
  byHandService,
  chainForFile,
  countingFetch,
  DEAD,
  PRICE,
  passHolding,
  transferred,
} from './byHand.ts'
import { endUser } from './sendSupport.ts'

const chain = chainForFile()

/** The clock's step between passes: finer than any wait of the worker's that matters here. */
const STEP_MS = 15_000

/**
 * A by-hand service and an end user whose account holds nothing, with a fill of its first send's
 * nonce: two transfers (7 and 8 wei), the second held at the node until the first was refused, so
 * the first's nonce is filled (the second's, refused too, goes back to the counter).
 */
async function refusedFill() {
  const counting = countingFetch((raw) => transferred(raw) === 8n)
  const h = await byHandService(chain, counting.fetch)
  const user = await endUser(h)
  expect(await chain.balance(user.from)).toBe(0n)
  const send = async (value: bigint) =>
    resultOf(
      'eth_send_transaction',
      await user.send({ calls: [{ to: DEAD, value: String(value) }], ...PRICE }),
    ).sendTransactionStatusId as string
  const first = await send(7n)
  await send(8n)
  const worker = startSendWorker(h.service.runtime, { loop: false })
  await passHolding(h, worker, [first], counting.release)
  const fillId = fillIdOf(first)
  const fill = (await h.service.store.get('sendTransactions', fillId))!
  expect(fill).toMatchObject({ status: 'PENDING', sponsored: false, sender: user.from })
  return { counting, h, user, worker, fillId, createdAt: fill.createdAt }
}

const fillOf = async (h: Harness, id: string) => (await h.service.store.get('sendTransactions', id))!

describe("a user's fill the node keeps refusing", { timeout: 120_000 }, () => {
  it('costs a few dozen node calls over its 3 hours, not one broadcast every 30 s', async () => {
    const { counting, h, worker, fillId, createdAt } = await refusedFill()
    try {
      counting.reset()
      const broadcastsAt: number[] = []
      let attempts = (await fillOf(h, fillId)).attempts
      while ((await fillOf(h, fillId)).status === 'PENDING' && h.clock.now() - createdAt < 4 * 3600_000) {
        h.clock.advance(STEP_MS)
        await worker.pass()
        const now = (await fillOf(h, fillId)).attempts
        if (now !== attempts) broadcastsAt.push(h.clock.now() - createdAt)
        attempts = now
      }
      const ended = await fillOf(h, fillId)
      // Still given up when it expires, not a wait later.
      expect(ended.status).toBe('FAILED')
      expect(ended.error?.message).toMatch(/^expired: the node still refused it 3 hours after it was made/)
      expect(h.clock.now() - createdAt).toBeLessThan(SEND_EXPIRES_AFTER_MS + STEP_MS)
      const calls = Object.fromEntries(counting.calls)
      const total = Object.values(calls).reduce((sum, count) => sum + count, 0)
      console.log('refused fill over 3 hours: signed again', broadcastsAt.length, 'times; node calls', calls)
      // Signed again 360 times before (every 30 s), 3 node calls each.
      expect(broadcastsAt.length).toBeLessThanOrEqual(30)
      expect(calls.eth_sendRawTransaction ?? 0).toBeLessThanOrEqual(31)
      expect(total).toBeLessThanOrEqual(100)
      // Never waits longer than the most (a pass's step of slack): the account, once it can pay, is
      // not left behind its empty nonce for long.
      const gaps = broadcastsAt.map((at, i) => at - (broadcastsAt[i - 1] ?? 0))
      expect(Math.max(...gaps)).toBeLessThanOrEqual(FILL_REFUSED_RETRY_AT_MOST_MS + STEP_MS)
      // Refused early on, it is still tried again within the first minute.
      expect(broadcastsAt[0]).toBeLessThanOrEqual(60_000)
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })

  it('is mined within the longest wait once the account can pay, 2 hours in', async () => {
    const { h, user, worker, fillId, createdAt } = await refusedFill()
    try {
      while (h.clock.now() - createdAt < 2 * 3600_000) {
        h.clock.advance(STEP_MS)
        await worker.pass()
      }
      expect((await fillOf(h, fillId)).status).toBe('PENDING')
      await chain.fund(user.from, 10n ** 16n)
      const funded = h.clock.now()
      while (
        ['PENDING', 'BROADCASTED'].includes((await fillOf(h, fillId)).status) &&
        h.clock.now() - funded < 2 * FILL_REFUSED_RETRY_AT_MOST_MS
      ) {
        h.clock.advance(STEP_MS)
        await worker.pass()
        // anvil mines just after it answers the broadcast.
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      expect((await fillOf(h, fillId)).status).toBe('INCLUDED')
      expect(h.clock.now() - funded).toBeLessThanOrEqual(FILL_REFUSED_RETRY_AT_MOST_MS + 2 * STEP_MS)
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
})
