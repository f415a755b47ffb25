// A user's fill that expires leaves its nonce a hole of the account's counter (`giveUpFill` ->
// `recordNonceHole`), and a counter keeps at most `MAX_HOLES` holes. A fill whose nonce finds no
// room is not given up: it stays open, looked at again `FILL_WAITS_FOR_ROOM_MS` later, so each
// nonce of the account is still filled or the counter's to give, and the account's sends once it
// can pay are mined. Before, the holes past the cap were dropped while their fills were already
// given up: nothing filled those nonces any more, no send took them, and every later send of the
// account was signed behind them and never mined. Found by the audit of a70eccd5.

import { describe, expect, it } from 'vitest'
import { FILL_WAITS_FOR_ROOM_MS, fillIdOf, SEND_EXPIRES_AFTER_MS } from '../../src/sending/evmSender.ts'
import { MAX_HOLES, nonceIdOf, OPEN_STATUSES } from '../../src/sending/sendingState.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import {
  byHandService,
  CAIP2,
  chainForFile,
  countingFetch,
  passes,
  passHolding,
  refusedAtNonceFive,
  sendRaw,
  transferred,
  transfers,
} from './byHand.ts'
import { endUser, passUntil } from './sendSupport.ts'

// More fills than the counter keeps holes: SENDS - 1 fills, MAX_HOLES of them holes, 3 past.
const SENDS = MAX_HOLES + 4
const chain = chainForFile()

const isOpen = (status: string) => (OPEN_STATUSES as readonly string[]).includes(status)

describe('more of an account’s fills expire than its counter keeps holes', { timeout: 180_000 }, () => {
  it('those past the holes stay open: every nonce is filled or a hole, and the account’s sends are mined once it pays', async () => {
    // The last send's broadcast waits until every earlier one was refused (and filled).
    const counting = countingFetch((raw) => transferred(raw) === BigInt(SENDS))
    const h = await byHandService(chain, counting.fetch)
    const user = await endUser(h)
    expect(await chain.balance(user.from)).toBe(0n)
    // Submitted at the service's clock as it is (`endUser`'s `send` sets it to real time, hours
    // back once the test moved it past the expiry).
    const send = transfers(h, user.from, user.as)
    // An app retrying on an account that holds nothing yet: SENDS sends, nonces 0..SENDS-1.
    const ids: string[] = []
    for (let i = 1; i <= SENDS; i++) ids.push(await send(i))
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      await passHolding(h, worker, ids.slice(0, -1), counting.release, 20_000)
      const fills = (await h.service.store.all('sendTransactions')).filter((row) => row.fills !== undefined)
      expect(fills).toHaveLength(SENDS - 1)
      // Refused (the account holds nothing) and signed again for 3 hours, then given up where
      // the counter has room for their nonces.
      await passes(h, worker, 4, 31_000)
      h.clock.advance(SEND_EXPIRES_AFTER_MS)
      await passes(h, worker, 3, 31_000)
      const counter = (await h.service.store.get('nonces', nonceIdOf(CAIP2, user.from)))!
      const holes = counter.holes ?? []
      expect(holes).toHaveLength(MAX_HOLES)
      const now = h.clock.now()
      const rows = await Promise.all(
        fills.map(async (fill) => (await h.service.store.get('sendTransactions', fill.id))!),
      )
      // Each given up leaves a hole; each left open waits an hour, not a pass.
      for (const row of rows)
        if (holes.includes(row.nonce!)) expect(row.status).toBe('FAILED')
        else {
          expect(row.status).toBe('PENDING')
          expect(row.notBefore).toBeGreaterThan(now + FILL_WAITS_FOR_ROOM_MS / 2)
        }
      // Every expired fill's nonce is still filled (its fill open) or the counter's to give.
      const lost = rows
        .filter((row) => !isOpen(row.status) && !holes.includes(row.nonce!))
        .map((row) => row.nonce)
      expect(lost).toEqual([])
      expect(rows.filter((row) => isOpen(row.status))).toHaveLength(SENDS - 1 - MAX_HOLES)

      // Funded now, the account sends as many times as there were sends: the first take the
      // holes, the rest wait behind the fills left open, which are signed again within the hour.
      await chain.fund(user.from, 10n ** 17n)
      const later: string[] = []
      for (let i = 0; i < SENDS; i++) later.push(await send(1000 + i))
      // Meanwhile the fills left open are not signed or broadcast again on every pass.
      await passes(h, worker, 3, 300)
      for (const row of rows.filter((row) => isOpen(row.status)))
        expect((await h.service.store.get('sendTransactions', row.id))!.attempts).toBe(row.attempts)
      h.clock.advance(FILL_WAITS_FOR_ROOM_MS)
      const statusesOf = () =>
        Promise.all(
          [...later, ...rows.filter((row) => isOpen(row.status)).map((row) => row.id)].map(
            async (id) => (await h.service.store.get('sendTransactions', id))!.status,
          ),
        )
      // Passes until all are final (anvil mines each just after it answers), bounded.
      await passUntil(h, worker, async () => !(await statusesOf()).some(isOpen))
      expect((await statusesOf()).filter((status) => status !== 'INCLUDED')).toEqual([])
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
  it('an unmined fill whose nonce finds no room stays open, asked about once an hour, and is given up once the counter has room', async () => {
    // The node refuses the transaction at nonce 5 (as it does one its sender cannot pay for).
    const { counting, h, user } = await refusedAtNonceFive(chain)
    // As in userFillsExpire: raw sends at nonces 5 and 6 (the counter's), the first refused; its
    // fill is queued by the node behind nonces 0..4 and never mined.
    await sendRaw(h, user, 5, 1n)
    await sendRaw(h, user, 6, 0n)
    const refused = (
      await h.service.store.findBy('sendTransactions', 'organizationId', user.organizationId)
    ).find((row) => row.nonce === '5')!
    const fillId = fillIdOf(refused.id)
    const counterId = nonceIdOf(CAIP2, user.from)
    const fillRow = async () => (await h.service.store.get('sendTransactions', fillId))!
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      await worker.pass() // nonce 5 refused: filled
      await worker.pass() // the fill broadcast, queued
      expect((await fillRow()).status).toBe('BROADCASTED')
      // The account's counter already keeps as many holes as it may (nonces its sends will take).
      const full = Array.from({ length: MAX_HOLES }, (_, i) => String(100 + i))
      await h.service.store.transaction(async (tx) => {
        const counter = (await tx.get('nonces', counterId))!
        await tx.put('nonces', { ...counter, next: '200', holes: full })
      })
      h.clock.advance(SEND_EXPIRES_AFTER_MS)
      await worker.pass()
      h.clock.advance(250)
      await worker.pass()
      // Not given up: its nonce would be neither filled nor a hole. Looked at again in an hour.
      const waiting = await fillRow()
      expect(waiting.status).toBe('BROADCASTED')
      expect(waiting.notBefore).toBeGreaterThan(h.clock.now() + FILL_WAITS_FOR_ROOM_MS / 2)
      expect((await h.service.store.get('nonces', counterId))!.holes).toEqual(full)
      counting.reset()
      await passes(h, worker, 5, 61_000)
      expect(Object.fromEntries(counting.calls)).toEqual({})
      // The account's sends took some holes: the next look gives the fill up, its nonce a hole.
      await h.service.store.transaction(async (tx) => {
        const counter = (await tx.get('nonces', counterId))!
        await tx.put('nonces', { ...counter, holes: full.slice(1) })
      })
      h.clock.advance(FILL_WAITS_FOR_ROOM_MS)
      await worker.pass()
      const ended = await fillRow()
      expect(ended.status).toBe('FAILED')
      expect(ended.error?.message).toMatch(/^expired: not mined within 3 hours of its commit/)
      expect((await h.service.store.get('nonces', counterId))!.holes).toEqual(['5', ...full.slice(1)])
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
})
