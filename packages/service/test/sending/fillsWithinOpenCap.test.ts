// What a user's fills cost the operator is bounded in count and in time. Fills are written by the
// worker (failUnmined), not by recordSend, and an unsponsored batch that delegates the account
// makes two when refused. An end user whose account holds nothing sends 64 such batches (the
// sub-organization's cap): the fills made stay within the cap (the refused send ended makes room
// for one; a nonce without room becomes a hole, or past the counter's 16 holes is left empty), and
// fills whose nonce finds no room among the holes once expired wait at most
// FILL_WAITS_FOR_ROOM_AT_MOST_MS, then end FAILED and cost no node call after. Before, 126 fills were
// made, 110 of them waited for room for good (the sub-organization, past its cap, could never send
// to take a hole), 330 node calls an hour.

import { Transaction } from 'micro-eth-signer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_OPEN_SENDS } from '../../src/sending/ethSend.ts'
import {
  FILL_WAITS_FOR_ROOM_AT_MOST_MS,
  FILL_WAITS_FOR_ROOM_MS,
  SEND_EXPIRES_AFTER_MS,
} from '../../src/sending/evmSender.ts'
import { OPEN_STATUSES } from '../../src/sending/sendingState.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { createHarness, fakeClock, type Harness, resultOf } from '../../src/testing/harness.ts'
import { type Chain, endUser, startChain } from './sendSupport.ts'

const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dEaD'
const GWEI = 10n ** 9n
const PRICE = { gasLimit: '300000', maxFeePerGas: String(2n * GWEI), maxPriorityFeePerGas: String(GWEI) }
const BATCHES = MAX_OPEN_SENDS.subOrganization
const HOUR = 3600_000
let chain: Chain

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

const isOpen = (status: string) => (OPEN_STATUSES as readonly string[]).includes(status)

async function waitForStatus(h: Harness, id: string, status: string) {
  const until = Date.now() + 60_000
  for (;;) {
    const row = await h.service.store.get('sendTransactions', id)
    if (row?.status === status) return row
    if (Date.now() > until) throw new Error(`send ${id} still ${row?.status}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('fills within the open-sends cap, and for a bounded time', { timeout: 300_000 }, () => {
  it('an end user’s refused batches make fills only within MAX_OPEN_SENDS, all ended, and no node call, a day past their expiry', async () => {
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const calls = { count: 0 }
    const last = BigInt(2 * (BATCHES - 1))
    // The last batch's broadcast waits until every earlier one was refused (and filled), so the
    // counter gives back only the last batch's two nonces.
    const fetchFn: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { method: string; params: string[] }
      calls.count++
      if (body.method === 'eth_sendRawTransaction' && body.params[0]!.startsWith('0x04')) {
        const raw = Transaction.fromHex(body.params[0]!).raw as { nonce: bigint }
        if (raw.nonce === last) await gate
      }
      return fetch(input, init)
    }
    const h = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: { [CAIP2]: chain.url },
      sending: { worker: false, pollIntervalMs: 250 },
      sponsorship: { delegates: { [CAIP2]: chain.delegate }, caps: {} },
      fetch: fetchFn,
    })
    const start = h.clock.now()
    const user = await endUser(h)
    expect(await chain.balance(user.from)).toBe(0n)
    const submit = (parameters: Record<string, unknown>) =>
      h.submit('eth_send_transaction', { from: user.from, caip2: CAIP2, ...PRICE, ...parameters }, user.as)
    // Unsponsored batches that delegate the account (not yet delegated): each takes two nonces.
    const ids: string[] = []
    for (let i = 0; i < BATCHES; i++) {
      const reply = await submit({
        calls: [
          { to: DEAD, value: String(i + 1) },
          { to: DEAD, value: '1' },
        ],
      })
      ids.push(resultOf('eth_send_transaction', reply).sendTransactionStatusId as string)
    }
    // The cap holds at submission.
    const over = await submit({ calls: [{ to: DEAD, value: '1' }], gasLimit: '21000' })
    expect(over.status).toBe(412)
    const openOf = async () =>
      (await h.service.store.findBy('sendTransactions', 'organizationId', user.organizationId)).filter(
        (row) => isOpen(row.status),
      )
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      const pass = worker.pass()
      for (const id of ids.slice(0, -1)) await waitForStatus(h, id, 'FAILED')
      release()
      await pass
      // Bounded in count: the fills made fit in the cap the sends did.
      const fills = (await openOf()).filter((row) => row.fills !== undefined)
      expect(fills.length).toBeGreaterThan(0)
      expect(fills.length).toBeLessThanOrEqual(MAX_OPEN_SENDS.subOrganization)
      // One refused batch made no fill of its authorization's nonce: its error says why.
      const unfilled = await h.service.store.get('sendTransactions', ids[ids.length - 2]!)
      expect(unfilled?.error?.message).toContain('(openSendsPerOrganization)')
      // Past the expiry, as many as the counter keeps become holes; the rest wait for room, an
      // hour at a time, each look within the cap, until they are given up.
      h.clock.advance(SEND_EXPIRES_AFTER_MS + 31_000)
      await worker.pass()
      h.clock.advance(31_000)
      await worker.pass()
      const waiting = await openOf()
      console.log('fills made:', fills.length, 'waiting for room after expiry:', waiting.length)
      expect(waiting.length).toBeGreaterThan(0)
      let hours = 0
      let perHour = 0
      while ((await openOf()).length > 0) {
        expect((await openOf()).length).toBeLessThanOrEqual(MAX_OPEN_SENDS.subOrganization)
        h.clock.advance(FILL_WAITS_FOR_ROOM_MS + 1_000)
        const before = calls.count
        await worker.pass()
        hours++
        // A refused fill's hourly look: broadcast (refused), then the market's fees to sign it again.
        perHour = Math.max(perHour, calls.count - before)
        expect(calls.count - before).toBeLessThanOrEqual(3 * MAX_OPEN_SENDS.subOrganization)
        // Bounded in time: every fill ends within the wait past its expiry (and a pass's margin).
        expect(h.clock.now() - start).toBeLessThanOrEqual(
          SEND_EXPIRES_AFTER_MS + FILL_WAITS_FOR_ROOM_AT_MOST_MS + 2 * HOUR,
        )
      }
      console.log('hours waited for room:', hours, 'most node calls in an hour:', perHour)
      // Ended for good: FAILED, their nonce left empty, and not looked at again.
      const ended = await h.service.store.get('sendTransactions', waiting[0]!.id)
      expect(ended?.status).toBe('FAILED')
      expect(ended?.error?.message).toContain('is left empty')
      expect(ended?.error?.message).toContain(`naming \`nonce\` ${ended?.nonce}`)
      const before = calls.count
      for (let hour = 0; hour < 3; hour++) {
        h.clock.advance(FILL_WAITS_FOR_ROOM_MS + 1_000)
        await worker.pass()
      }
      expect(calls.count - before).toBe(0)
      // The sub-organization sends again.
      const again = await submit({ calls: [{ to: DEAD, value: '1' }], gasLimit: '21000' })
      expect(again.status).toBe(200)
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
})
