// What an end user's sends queued behind a nonce gap cost the operator's node. Before: the worker
// asked `eth_getTransactionReceipt` of every version of an open send on every pass (250 ms), and
// replaced a send 3 times although it waited behind a nonce no transaction of its sender's used (no
// fee raise fills a gap): each such send cost 4 receipt calls a pass, for the 3 hours until it
// expired. An end user with 0.01 ETH queued 64 transfers at nonces 5..68 through
// `eth_send_transaction` naming `nonce` (held to no gap, unlike a raw transaction's), never mined,
// nothing paid: 256 calls a pass, 10,240 in 10 s an hour later, millions a sub-organization.
// Now: a look is one `eth_getTransactionCount(sender, latest)`, receipts only once that count has
// passed the send's nonce; a send behind a gap is never replaced; an unsponsored one that can only
// wait is looked at a quarter of its age later (at most every 5 minutes, `WAITING_LOOK_AT_MOST_MS`);
// a caller-named nonce more than 16 past the account's next (`MAX_NONCE_GAP`) is a 400 naming
// `parameters.nonce`, as a raw transaction's is. A send whose gap is filled is still seen mined,
// and what is never mined still ends expired after 3 hours.
// Node calls are counted, not timed; the worker is run by hand, the service's clock moved.
import { describe, expect, it } from 'vitest'
import { SEND_EXPIRES_AFTER_MS, WAITING_LOOK_AT_MOST_MS } from '../../src/sending/evmSender.ts'
import { MAX_NONCE_GAP } from '../../src/sending/sendingState.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import type { Harness } from '../../src/testing/harness.ts'
import { resultOf } from '../../src/testing/harness.ts'
import { byHandService, CAIP2, chainForFile, countingFetch, DEAD, PRICE, passes } from './byHand.ts'
import { endUser } from './sendSupport.ts'

const USERS = 4
/** Each user's sends: nonces 1..16, behind nonce 0, which nothing uses. */
const PER_USER = Number(MAX_NONCE_GAP)
const SENDS = USERS * PER_USER
const chain = chainForFile()

const total = (calls: Map<string, number>) => [...calls.values()].reduce((sum, n) => sum + n, 0)

/** Every send of `ids` as stored. */
const rowsOf = async (h: Harness, ids: string[]) =>
  Promise.all(ids.map(async (id) => (await h.service.store.get('sendTransactions', id))!))

describe('sends queued behind a nonce gap cost the operator node calls', { timeout: 300_000 }, () => {
  it(`${SENDS} transfers queued behind a gap (${USERS} end users, nonces 1..${PER_USER}): one count a look, no replacement, looks backed off, seen mined once the gap is filled, expired at 3 hours`, async () => {
    const counting = countingFetch()
    const h = await byHandService(chain, counting.fetch)
    const funds = 10n ** 16n
    const users = []
    const ids: string[][] = []
    for (let u = 0; u < USERS; u++) {
      const user = await endUser(h)
      await chain.fund(user.from, funds)
      users.push(user)
      const mine: string[] = []
      for (let nonce = 1; nonce <= PER_USER; nonce++) {
        const reply = await user.send({ calls: [{ to: DEAD, value: '1' }], nonce: String(nonce), ...PRICE })
        mine.push(resultOf('eth_send_transaction', reply).sendTransactionStatusId as string)
      }
      ids.push(mine)
    }
    const all = ids.flat()
    const start = h.clock.now()
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      await worker.pass() // broadcast: the node queues each behind its account's nonce 0
      for (const row of await rowsOf(h, all)) expect(row.status).toBe('BROADCASTED')

      // Its first seconds: a look each pass, no receipt asked (no version can be mined while the
      // account's count is below its nonce), its account's count asked once a pass for all its
      // sends (`sharedInPass`). Before: one receipt a version a pass.
      counting.reset()
      await passes(h, worker, 40, 250)
      console.log('first 40 passes (10 s):', Object.fromEntries(counting.calls))
      expect(Object.fromEntries(counting.calls)).toEqual({ eth_getTransactionCount: USERS * 40 })

      // To 30 minutes, a pass every 2 s: never replaced (a fee raise cannot fill the gap), and
      // looked at less and less often. Before: 3 replacements each, then 4 receipts a pass.
      counting.reset()
      const passesTo = (at: number, stepMs: number) =>
        passes(h, worker, Math.ceil((start + at - h.clock.now()) / stepMs), stepMs)
      await passesTo(30 * 60_000, 2000)
      const toHalfHour = Object.fromEntries(counting.calls)
      console.log('10 s to 30 min, a pass every 2 s:', toHalfHour, 'total', total(counting.calls))
      expect(toHalfHour.eth_sendRawTransaction ?? 0).toBe(0)
      expect(toHalfHour.eth_getTransactionReceipt ?? 0).toBe(0)
      for (const row of await rowsOf(h, all)) {
        expect(row).toMatchObject({ status: 'BROADCASTED', replacements: 0 })
        expect(row.priorHashes ?? []).toEqual([])
      }
      // Each pass of its first minute (25 at this step), then a look a quarter of its age later
      // (about 16 to 30 minutes), each its mined count, its pending count (is a replacement of any
      // use: no, the node holds no nonce 0) and whether the node still holds it.
      expect(total(counting.calls)).toBeLessThanOrEqual(SENDS * (25 + 3 * 20))

      // The first user fills its gap (a send the service numbers: nonce 0): the node mines it and
      // the 16 queued behind it. Each is seen mined, its first version's receipt, within a backed-off
      // look (at most 5 minutes).
      const [first, ...rest] = users
      const filler = await h.submit(
        'eth_send_transaction',
        { from: first!.from, caip2: CAIP2, calls: [{ to: DEAD, value: '1' }], ...PRICE },
        first!.as,
      )
      expect(filler.status).toBe(200)
      counting.reset()
      await passes(h, worker, Math.ceil(WAITING_LOOK_AT_MOST_MS / 2000) + 1, 2000)
      for (const row of await rowsOf(h, ids[0]!)) {
        expect(row).toMatchObject({ status: 'INCLUDED', replacements: 0, receipt: { status: 'success' } })
      }
      // Each queued send's versions (one) asked about once, when its count passed its nonce.
      expect(counting.calls.get('eth_getTransactionReceipt')).toBe(PER_USER + 1)
      expect(await chain.balance(first!.from)).toBeLessThan(funds)

      // An hour in, the auditor's 10 s of passes at the default cadence: at most a look each
      // (3 calls, as above). Before: 256 receipt calls a pass.
      const left = ids.slice(1).flat()
      await passesTo(3600_000, 2000)
      counting.reset()
      await passes(h, worker, 40, 250)
      console.log('40 passes an hour in:', Object.fromEntries(counting.calls))
      expect(total(counting.calls)).toBeLessThanOrEqual(left.length * 3)
      expect(counting.calls.get('eth_getTransactionReceipt') ?? 0).toBe(0)

      // To the expiry: a look every 5 minutes, then FAILED, expired, asked about no more.
      counting.reset()
      await passesTo(SEND_EXPIRES_AFTER_MS + 2000, 2000)
      const toExpiry = total(counting.calls)
      console.log('1 h to 3 h, a pass every 2 s:', Object.fromEntries(counting.calls), 'total', toExpiry)
      expect(toExpiry).toBeLessThanOrEqual(left.length * 3 * (24 + 2))
      for (const row of await rowsOf(h, left)) {
        expect(row.status).toBe('FAILED')
        expect(row.error?.message).toMatch(/^expired: not mined within 3 hours/)
      }
      counting.reset()
      await passes(h, worker, 10, 60_000)
      expect(total(counting.calls)).toBe(0)
      // Free to the attacker, as before: nothing of theirs was mined.
      for (const user of rest) expect(await chain.balance(user.from)).toBe(funds)
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })

  it(`eth_send_transaction naming a nonce more than ${MAX_NONCE_GAP} past the account's next is a 400 naming parameters.nonce, as a raw send's is; the next is the higher of the node's pending count and the service's counter`, async () => {
    const counting = countingFetch()
    const h = await byHandService(chain, counting.fetch)
    try {
      const user = await endUser(h)
      await chain.fund(user.from, 10n ** 16n)
      const at = (nonce: bigint) =>
        user.send({ calls: [{ to: DEAD, value: '1' }], nonce: String(nonce), ...PRICE })
      // A fresh account: its next nonce is 0.
      for (const far of [MAX_NONCE_GAP + 1n, MAX_NONCE_GAP + 50n, 131_072n]) {
        const reply = await at(far)
        expect(reply).toMatchObject({ status: 400, body: { details: { field: 'parameters.nonce' } } })
        expect(JSON.stringify(reply.body)).toContain(
          `more than ${MAX_NONCE_GAP} past ${user.from}'s next nonce 0`,
        )
      }
      const sends = (await h.service.store.all('sendTransactions')).length
      expect(sends).toBe(0)
      expect((await at(MAX_NONCE_GAP)).status).toBe(200)
      // Three sends the service numbers, committed and not yet broadcast (the node's pending count
      // is still 0): the counter's next is 3, so 3 + 16 is within the gap, 3 + 17 is not.
      for (let i = 0; i < 3; i++)
        expect((await user.send({ calls: [{ to: DEAD, value: '1' }], ...PRICE })).status).toBe(200)
      expect(BigInt((await chain.rpc('eth_getTransactionCount', [user.from, 'pending'])) as string)).toBe(0n)
      expect(await at(3n + MAX_NONCE_GAP + 1n)).toMatchObject({
        status: 400,
        body: { details: { field: 'parameters.nonce' } },
      })
      expect((await at(3n + MAX_NONCE_GAP)).status).toBe(200)
    } finally {
      await h.service.close()
    }
  })
})
