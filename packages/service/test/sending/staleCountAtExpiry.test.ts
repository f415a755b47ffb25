// A worker pass reads a sender's mined count once (`SendContext.sharedInPass`, b941e867), when the
// first of its sends is looked at, and every later send of that sender in the pass decides on that
// answer, however long the pass has run since (its broadcast sends are looked at 16 at a time, each
// batch after the last's node calls and writes). An unsponsored send at its expiry decided
// irreversibly on it: a count that did not show it mined skipped its receipts and ended it FAILED
// "expired: not mined", for good, while it was mined (an app retrying it ran its calls twice). Here
// an end user's 17 open transfers reach their expiry; a block mines them all right after the pass's
// count is answered; the 17th is looked at in the pass's second batch, after that block. Now a send
// at its expiry asks the count afresh before it ends, and is seen INCLUDED, as it is without the
// memo (the control).
import { describe, expect, it } from 'vitest'
import type { ChainSender } from '../../src/sending/ChainSender.ts'
import { evmSender, SEND_EXPIRES_AFTER_MS } from '../../src/sending/evmSender.ts'
import { SENDING } from '../../src/sending/sendingState.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { resultOf } from '../../src/testing/harness.ts'
import { byHandService, chainForFile, DEAD, PRICE } from './byHand.ts'
import { endUser } from './sendSupport.ts'

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
