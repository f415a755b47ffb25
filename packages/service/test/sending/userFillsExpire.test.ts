// A fill of an end user's own account (not the sponsor's) is given up like an unsponsored send:
// one the node still refuses, or that is still unmined, SEND_EXPIRES_AFTER_MS after it was made
// ends FAILED and is no longer broadcast or asked about, and its nonce is left a hole of the
// account's counter, which the account's next send takes. Before, a user's fill never expired: an
// account holding nothing had its fill refused and signed again every 30 s for good, and a fill
// the node queued behind a gap was asked about on every pass for good. Node calls are counted;
// the worker is run by hand, one pass at a time (until a send is mined: anvil mines after it answers).

import { Transaction } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { fillIdOf, SEND_EXPIRES_AFTER_MS } from '../../src/sending/evmSender.ts'
import { nonceIdOf } from '../../src/sending/sendingState.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import { type Harness, resultOf } from '../../src/testing/harness.ts'
import {
  byHandService,
  CAIP2,
  chainForFile,
  countingFetch,
  DEAD,
  nodeRefusal,
  PRICE,
  passes,
  passHolding,
  refusedAtNonceFive,
  sendRaw,
  transferred,
} from './byHand.ts'
import { endUser, erc20Call, passUntil, sponsoredService } from './sendSupport.ts'

const chain = chainForFile()

const openSends = async (h: Harness) =>
  (await h.service.store.all('sendTransactions')).filter(
    (row) => row.status === 'PENDING' || row.status === 'BROADCASTED',
  )

describe("a fill of an end user's own account expires", { timeout: 120_000 }, () => {
  it('two sends of an account holding nothing, the first refused after the second took the next nonce: its fill, refused, ends within 3 hours, and the account sends at that nonce once funded', async () => {
    // The second send (8 wei) is broadcast only once the first (7 wei) was refused and filled.
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
    const second = await send(8n)
    const firstRow = (await h.service.store.get('sendTransactions', first))!
    const secondRow = (await h.service.store.get('sendTransactions', second))!
    // The counter gave both nonces.
    expect(firstRow.countedNonce).toBe(true)
    expect(BigInt(secondRow.nonce!)).toBe(BigInt(firstRow.nonce!) + 1n)
    // As an instance not yet upgraded writes it (no countedNonce): its activity named no nonce,
    // so its nonce is still the counter's.
    const { countedNonce: _, ...legacy } = firstRow
    await h.service.store.transaction((tx) => tx.put('sendTransactions', legacy))
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      await passHolding(h, worker, [first], counting.release)
      expect((await h.service.store.get('sendTransactions', first))!.error?.message).toMatch(
        /insufficient funds/i,
      )
      expect((await h.service.store.get('sendTransactions', second))!.status).toBe('FAILED')
      const fill = (await h.service.store.get('sendTransactions', fillIdOf(first)))!
      expect(fill).toMatchObject({ nonce: firstRow.nonce, sponsored: false, sender: user.from })
      // Refused (the account holds nothing) and signed again, with backoff, for 3 hours.
      await passes(h, worker, 10, 31_000)
      expect((await h.service.store.get('sendTransactions', fillIdOf(first)))!.status).toBe('PENDING')
      h.clock.advance(SEND_EXPIRES_AFTER_MS)
      await worker.pass()
      const ended = (await h.service.store.get('sendTransactions', fillIdOf(first)))!
      expect(ended.status).toBe('FAILED')
      expect(ended.error?.message).toMatch(
        /^expired: the node still refused it 3 hours after it was made \(.*insufficient funds.*\); the service no longer follows it$/i,
      )
      expect(await openSends(h)).toHaveLength(0)
      counting.reset()
      await passes(h, worker, 5, 31_000)
      expect(Object.fromEntries(counting.calls)).toEqual({})
      // Its nonce is a hole of the account's counter: once the account holds something, its next
      // send takes it (not one behind it) and is mined.
      const counter = (await h.service.store.get('nonces', nonceIdOf(CAIP2, user.from)))!
      expect(counter.holes).toEqual([firstRow.nonce])
      await chain.fund(user.from, 10n ** 17n)
      const next = await send(9n)
      expect((await h.service.store.get('sendTransactions', next))!.nonce).toBe(firstRow.nonce)
      const status = async () => (await h.service.store.get('sendTransactions', next))!.status
      await passUntil(h, worker, async () => !['PENDING', 'BROADCASTED'].includes(await status()))
      expect((await h.service.store.get('sendTransactions', next))!.status).toBe('INCLUDED')
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })

  it('a fill the node queues behind a gap (raw sends of the account at nonces 5 and 6, the first refused): no longer asked about 3 hours after it was made', async () => {
    // The node refuses the transaction at nonce 5 (as it does one its sender cannot pay for).
    const { counting, h, user } = await refusedAtNonceFive(chain)
    // Nonces 5 and 6, each ahead of the account's counter: taken on it (countedNonce).
    await sendRaw(h, user, 5, 1n, { followTime: true })
    await sendRaw(h, user, 6, 0n, { followTime: true })
    const rows = await h.service.store.findBy('sendTransactions', 'organizationId', user.organizationId)
    const refused = rows.find((row) => row.nonce === '5')!
    expect(rows.every((row) => row.countedNonce === true)).toBe(true)
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      await worker.pass() // nonce 5 refused (insufficient funds): filled, the counter being past 6
      await worker.pass() // the fill broadcast: queued by the node behind nonces 0..4
      const fill = (await h.service.store.get('sendTransactions', fillIdOf(refused.id)))!
      expect(fill).toMatchObject({ status: 'BROADCASTED', nonce: '5', sponsored: false })
      await passes(h, worker, 5, 61_000)
      expect(['PENDING', 'BROADCASTED']).toContain(
        (await h.service.store.get('sendTransactions', fillIdOf(refused.id)))!.status,
      )
      h.clock.advance(SEND_EXPIRES_AFTER_MS)
      await worker.pass() // broadcast if a replacement was made last pass; else ends
      h.clock.advance(250)
      await worker.pass()
      const ended = (await h.service.store.get('sendTransactions', fillIdOf(refused.id)))!
      expect(ended.status).toBe('FAILED')
      expect(ended.error?.message).toMatch(/^expired: not mined within 3 hours of its commit/)
      expect(await openSends(h)).toHaveLength(0)
      counting.reset()
      h.clock.advance(250)
      await worker.pass()
      expect(Object.fromEntries(counting.calls)).toEqual({})
      // Nothing was mined: the account paid nothing.
      expect(await chain.balance(user.from)).toBe(10n ** 16n)
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })

  it("a sponsor's fill does not expire: refused past 3 hours, it is still signed again, and the later sponsored send is mined once the node takes it", async () => {
    let bad = ''
    let victim = ''
    let refuseFills = true
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const toOf = (raw: string) => String((Transaction.fromHex(raw).raw as { to?: string }).to).toLowerCase()
    let sponsor = ''
    const h = await sponsoredService(
      chain,
      {},
      { worker: false, pollIntervalMs: 250 },
      {
        fetch: async (input, init) => {
          const body = JSON.parse(String(init?.body)) as { id: number; method: string; params: string[] }
          if (body.method === 'eth_sendRawTransaction') {
            const to = toOf(body.params[0]!)
            if (to === bad) return nodeRefusal(body.id, 'authority already reserved')
            if (to === sponsor && refuseFills) return nodeRefusal(body.id, 'txpool is full')
            if (to === victim) await gate
          }
          return fetch(input, init)
        },
      },
    )
    sponsor = sponsorAddress(h.service.runtime)!.toLowerCase()
    const badUser = await endUser(h)
    const victimUser = await endUser(h)
    bad = badUser.from.toLowerCase()
    victim = victimUser.from.toLowerCase()
    const sponsored = async (user: typeof badUser, amount: bigint) =>
      resultOf(
        'eth_send_transaction',
        await user.send({ sponsor: true, calls: [erc20Call('mint', DEAD, amount)] }),
      ).sendTransactionStatusId as string
    const badId = await sponsored(badUser, 1n)
    const victimId = await sponsored(victimUser, 2n)
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      await passHolding(h, worker, [badId], release)
      expect((await h.service.store.get('sendTransactions', fillIdOf(badId)))!.sponsored).toBe(true)
      await passes(h, worker, 5, 31_000)
      h.clock.advance(SEND_EXPIRES_AFTER_MS)
      await passes(h, worker, 3, 31_000)
      // Still followed: every user's later sponsored send waits behind the sponsor's nonce.
      const fill = (await h.service.store.get('sendTransactions', fillIdOf(badId)))!
      expect(fill.status).toBe('PENDING')
      expect(fill.attempts).toBeGreaterThan(5)
      expect(['PENDING', 'BROADCASTED']).toContain(
        (await h.service.store.get('sendTransactions', victimId))!.status,
      )
      refuseFills = false
      const final = async (id: string) =>
        !['PENDING', 'BROADCASTED'].includes((await h.service.store.get('sendTransactions', id))!.status)
      await passUntil(h, worker, async () => (await final(fillIdOf(badId))) && (await final(victimId)), {
        stepMs: 31_000,
      })
      expect((await h.service.store.get('sendTransactions', fillIdOf(badId)))!.status).toBe('INCLUDED')
      expect((await h.service.store.get('sendTransactions', victimId))!.status).toBe('INCLUDED')
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
})
