// A fill of an end user's own account (not the sponsor's) is given up like an unsponsored send:
// one the node still refuses, or that is still unmined, SEND_EXPIRES_AFTER_MS after it was made
// ends FAILED and is no longer broadcast or asked about, and its nonce is left a hole of the
// account's counter, which the account's next send takes. Before, a user's fill never expired: an
// account holding nothing had its fill refused and signed again every 30 s for good, and a fill
// the node queued behind a gap was asked about on every pass for good. Node calls are counted;
// the worker is run by hand, one pass at a time (until a send is mined: anvil mines after it answers).

import { Transaction } from 'micro-eth-signer'
import { serializeTransaction } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillIdOf, SEND_EXPIRES_AFTER_MS } from '../../src/sending/evmSender.ts'
import { nonceIdOf } from '../../src/sending/sendingState.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import { createHarness, fakeClock, type Harness, resultOf } from '../../src/testing/harness.ts'
import { type Chain, endUser, erc20Call, passUntil, sponsoredService, startChain } from './sendSupport.ts'

const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dEaD'
const GWEI = 10n ** 9n
const PRICE = { gasLimit: '21000', maxFeePerGas: String(2n * GWEI), maxPriorityFeePerGas: String(GWEI) }
let chain: Chain

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

/**
 * A `fetch` that counts the service's JSON-RPC calls by method, holds the broadcast of every
 * transaction `held` picks until `release` is called, and refuses that of every one `refused`
 * picks as a node refuses a transaction its sender cannot pay for.
 */
function countingFetch(
  held: (raw: string) => boolean = () => false,
  refused: (raw: string) => boolean = () => false,
) {
  const calls = new Map<string, number>()
  let release = () => {}
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const fetchFn: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { method: string; params: string[] }
    calls.set(body.method, (calls.get(body.method) ?? 0) + 1)
    if (body.method === 'eth_sendRawTransaction' && held(body.params[0]!)) await gate
    if (body.method === 'eth_sendRawTransaction' && refused(body.params[0]!)) {
      const error = { code: -32000, message: 'insufficient funds for gas * price + value' }
      return new Response(JSON.stringify({ jsonrpc: '2.0', id: (body as { id?: number }).id, error }), {
        headers: { 'content-type': 'application/json' },
      })
    }
    return fetch(input, init)
  }
  return { fetch: fetchFn, calls, release, reset: () => calls.clear() }
}

const transferred = (raw: string) => (Transaction.fromHex(raw).raw as { value: bigint }).value

async function waitForStatus(h: Harness, id: string, status: string) {
  const until = Date.now() + 10_000
  for (;;) {
    const row = await h.service.store.get('sendTransactions', id)
    if (row?.status === status) return row
    if (Date.now() > until) throw new Error(`send ${id} still ${row?.status}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const openSends = async (h: Harness) =>
  (await h.service.store.all('sendTransactions')).filter(
    (row) => row.status === 'PENDING' || row.status === 'BROADCASTED',
  )

describe("a fill of an end user's own account expires", { timeout: 120_000 }, () => {
  it('two sends of an account holding nothing, the first refused after the second took the next nonce: its fill, refused, ends within 3 hours, and the account sends at that nonce once funded', async () => {
    // The second send (8 wei) is broadcast only once the first (7 wei) was refused and filled.
    const counting = countingFetch((raw) => transferred(raw) === 8n)
    const h = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: { [CAIP2]: chain.url },
      sending: { worker: false, pollIntervalMs: 250 },
      fetch: counting.fetch,
    })
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
      const pass = worker.pass()
      await waitForStatus(h, first, 'FAILED')
      counting.release()
      await pass
      expect((await h.service.store.get('sendTransactions', first))!.error?.message).toMatch(
        /insufficient funds/i,
      )
      expect((await h.service.store.get('sendTransactions', second))!.status).toBe('FAILED')
      const fill = (await h.service.store.get('sendTransactions', fillIdOf(first)))!
      expect(fill).toMatchObject({ nonce: firstRow.nonce, sponsored: false, sender: user.from })
      // Refused (the account holds nothing) and signed again, with backoff, for 3 hours.
      for (let i = 0; i < 10; i++) {
        h.clock.advance(31_000)
        await worker.pass()
      }
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
      for (let i = 0; i < 5; i++) {
        h.clock.advance(31_000)
        await worker.pass()
      }
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
    const counting = countingFetch(
      undefined,
      (raw) => Transaction.fromHex(raw).raw.nonce === 5n && transferred(raw) === 1n,
    )
    const h = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: { [CAIP2]: chain.url },
      sending: { worker: false, pollIntervalMs: 250 },
      fetch: counting.fetch,
    })
    const user = await endUser(h)
    await chain.fund(user.from, 10n ** 16n)
    const raw = async (nonce: number, value: bigint) => {
      const unsigned = serializeTransaction({
        type: 'eip1559',
        chainId: 31337,
        nonce,
        to: DEAD,
        value,
        gas: 21_000n,
        maxFeePerGas: 2n * GWEI,
        maxPriorityFeePerGas: GWEI,
      })
      h.clock.set(Date.now())
      const { signedTransaction } = resultOf(
        'sign_transaction',
        await h.submit(
          'sign_transaction',
          { signWith: user.from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned },
          user.as,
        ),
      ) as { signedTransaction: string }
      h.clock.set(Date.now())
      resultOf(
        'eth_send_raw_transaction',
        await h.submit('eth_send_raw_transaction', { signedTransaction, caip2: CAIP2 }, user.as),
      )
    }
    // Nonces 5 and 6, each ahead of the account's counter: taken on it (countedNonce).
    await raw(5, 1n)
    await raw(6, 0n)
    const rows = await h.service.store.findBy('sendTransactions', 'organizationId', user.organizationId)
    const refused = rows.find((row) => row.nonce === '5')!
    expect(rows.every((row) => row.countedNonce === true)).toBe(true)
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      await worker.pass() // nonce 5 refused (insufficient funds): filled, the counter being past 6
      await worker.pass() // the fill broadcast: queued by the node behind nonces 0..4
      const fill = (await h.service.store.get('sendTransactions', fillIdOf(refused.id)))!
      expect(fill).toMatchObject({ status: 'BROADCASTED', nonce: '5', sponsored: false })
      for (let i = 0; i < 5; i++) {
        h.clock.advance(61_000)
        await worker.pass()
      }
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
    const refusal = (id: number, message: string) =>
      new Response(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message } }), {
        headers: { 'content-type': 'application/json' },
      })
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
            if (to === bad) return refusal(body.id, 'authority already reserved')
            if (to === sponsor && refuseFills) return refusal(body.id, 'txpool is full')
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
      const pass = worker.pass()
      await waitForStatus(h, badId, 'FAILED')
      release()
      await pass
      expect((await h.service.store.get('sendTransactions', fillIdOf(badId)))!.sponsored).toBe(true)
      for (let i = 0; i < 5; i++) {
        h.clock.advance(31_000)
        await worker.pass()
      }
      h.clock.advance(SEND_EXPIRES_AFTER_MS)
      for (let i = 0; i < 3; i++) {
        h.clock.advance(31_000)
        await worker.pass()
      }
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
