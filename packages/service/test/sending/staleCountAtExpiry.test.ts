// A worker pass reads a sender's mined count once (`SendContext.sharedInPass`, b941e867), when the
// first of its sends is looked at, and every later send of that sender in the pass decides on that
// answer, however long the pass has run since (its broadcast sends are looked at 16 at a time, each
// batch after the last's node calls and writes). An unsponsored send at its expiry decided
// irreversibly on it: a count that did not show it mined skipped its receipts and ended it FAILED
// "expired: not mined", for good, while it was mined (an app retrying it ran its calls twice). Here
// an end user's 17 open transfers reach their expiry; a block mines them all right after the pass's
// count is answered; the 17th is looked at in the pass's second batch, after that block. Now a send
// at its expiry asks the count afresh before it ends, and is seen INCLUDED, as it is without the
// memo (the control). What is left, as docs/sending.md says (a node that still holds an expired
// send may mine it later): a block mining it between that fresh count and the FAILED; the send
// ends FAILED "expired" while mined, its reservation under spending limits kept at its most (the
// last case, from the audit of the send worker's lease).
import { describe, expect, it } from 'vitest'
import type { ChainSender } from '../../src/sending/ChainSender.ts'
import { evmSender, SEND_EXPIRES_AFTER_MS } from '../../src/sending/evmSender.ts'
import { SENDING } from '../../src/sending/sendingState.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { resultOf } from '../../src/testing/harness.ts'
import { byHandService, chainForFile, DEAD, PRICE, transferUnderLimit } from './byHand.ts'
import { endUser, receiptOf } from './sendSupport.ts'

const chain = chainForFile()
const SENDS = 17

/** The scenario; `withoutMemo` runs the worker's EVM looks without `sharedInPass` (as before b941e867). */
async function scenario(withoutMemo: boolean) {
  let armed = false
  let minedAt: number | undefined
  const fetchFn: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { method: string; params: string[] }
    const answer = await fetch(input, init)
    if (armed && body.method === 'eth_getTransactionCount' && body.params[1] === 'latest') {
      armed = false
      // The next block arrives just after the node answered the pass's first count.
      await chain.rpc('evm_mine', [])
      minedAt = Date.now()
    }
    return answer
  }
  const h = await byHandService(chain, fetchFn)
  if (withoutMemo) {
    const senders = h.service.runtime.stateOf(SENDING).senders as Map<string, ChainSender>
    senders.set('eip155', {
      ...evmSender,
      track: (ctx, row) => evmSender.track({ ...ctx, sharedInPass: undefined }, row),
    })
  }
  const worker = startSendWorker(h.service.runtime, { loop: false })
  await chain.rpc('evm_setAutomine', [false])
  try {
    const user = await endUser(h)
    await chain.fund(user.from, 10n ** 17n)
    const ids: string[] = []
    for (let i = 0; i < SENDS; i++)
      ids.push(
        resultOf('eth_send_transaction', await user.send({ calls: [{ to: DEAD, value: '1' }], ...PRICE }))
          .sendTransactionStatusId as string,
      )
    await worker.pass() // all broadcast, held in the node's pool
    const open = await h.service.store.findBy('sendTransactions', 'status', 'BROADCASTED')
    expect(open.length).toBe(SENDS)
    // The pass at their expiry; the 17th is in its second batch.
    const last = open.at(-1)!
    h.clock.advance(SEND_EXPIRES_AFTER_MS + 1000)
    armed = true
    await worker.pass()
    expect(minedAt).toBeDefined()
    const row = (await h.service.store.get('sendTransactions', last.id))!
    const receipt = await chain.rpc('eth_getTransactionReceipt', [row.txHash])
    const statuses = await Promise.all(
      ids.map(async (id) => (await h.service.store.get('sendTransactions', id))!.status),
    )
    expect(receipt, 'the 17th send is mined on chain').not.toBeNull()
    return { row, statuses }
  } finally {
    await chain.rpc('evm_setAutomine', [true])
    await worker.stop()
    await h.service.close()
  }
}

describe('a stale count shared by a pass', { timeout: 120_000 }, () => {
  it('control: without the memo, the send looked at after its block is seen INCLUDED', async () => {
    expect((await scenario(true)).row.status).toBe('INCLUDED')
  })

  it('does not end FAILED (expired) a send mined before the worker looked at it', async () => {
    const { row, statuses } = await scenario(false)
    expect(row.status, `looked at after its block, it ended ${row.status}: ${row.error?.message}`).toBe(
      'INCLUDED',
    )
    // Each asks the count afresh at its expiry, after the block: every one is seen mined.
    expect(statuses).toEqual(Array(SENDS).fill('INCLUDED'))
  })
})

describe('a block mining a send between the fresh count at its expiry and its FAILED', {
  timeout: 120_000,
}, () => {
  it('ends it FAILED "expired" while mined, its reservation kept at its most', async () => {
    let sender = ''
    let counts = 0
    let armed = false
    const fetchFn: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { method: string; params: string[] }
      if (armed && body.method === 'eth_getTransactionCount' && body.params[0]?.toLowerCase() === sender) {
        counts++
        const answer = await fetch(input, init)
        if (counts === 2) await chain.rpc('evm_mine', []) // after the fresh count, before the write
        return answer
      }
      return fetch(input, init)
    }
    const h = await byHandService(chain, fetchFn)
    const worker = startSendWorker(h.service.runtime, { loop: false })
    await chain.rpc('evm_setAutomine', [false])
    try {
      const { row, used } = await transferUnderLimit(h, chain)
      sender = (await row()).sender.toLowerCase()
      await worker.pass()
      expect((await row()).status).toBe('BROADCASTED')
      const before = await used()
      h.clock.advance(SEND_EXPIRES_AFTER_MS + 1)
      armed = true
      await worker.pass()
      const end = await row()
      expect(counts, "the pass's count, then the fresh one").toBe(2)
      expect((await receiptOf(chain, end.txHash))?.status).toBe('0x1')
      expect(end.status).toBe('FAILED')
      expect(end.error?.message).toMatch(/^expired/)
      expect(await used()).toBe(before)
      expect(before).toBe(5n + BigInt(end.reservedFee!))
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await worker.stop()
      await h.service.close()
    }
  })
})
