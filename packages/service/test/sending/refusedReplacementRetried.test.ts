// A sponsored send whose replacement the node refused for funds (the sponsor's balance covers its
// first version, not the raised fee), while the base fee stays above its first price. Before: the
// send went back to its first version and waited on it for good, replaced no more
// (`replacements = maxReplacements`): never mined while the base fee stayed above that price, and
// every user's later sponsored send waited behind the sponsor's nonce, even once the operator
// refunded the sponsor. Now the replacement is tried again once every `replaceAfterMs` (each try
// judged by every ceiling and cap, its raise counted against the caps once however often it is
// refused), so once the sponsor is refunded it is raised and mined, and the later sends with it.
// anvil mines only when the test says: nothing while the sponsor is short (anvil drops from its pool
// what a block's base fee prices out, where geth keeps it, so no block is mined while the first
// version must stay in the pool), then each block at a base fee above the first version's price.
import { Transaction } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import type { SendTransactionRow } from '../../src/kernel/store/model.ts'
import { WAITING_LOOK_AT_MOST_MS } from '../../src/sending/evmSender.ts'
import { SENDING_DEFAULTS } from '../../src/sending/SendingOptions.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import { type Harness, resultOf } from '../../src/testing/harness.ts'
import { byHandService, chainForFile, DEAD, GWEI, mineAtBaseFee, nodeRefusal, PRICE } from './byHand.ts'
import { endUser, erc20Call, receiptOf, sponsoredService } from './sendSupport.ts'

const chain = chainForFile()
const STEP_MS = 5000
const REPLACE_AFTER_MS = SENDING_DEFAULTS.replaceAfterMs

/** The service's node calls, counted by method, and each broadcast's nonce. */
function countingNode(refuse: (raw: string) => string | undefined = () => undefined) {
  const calls = new Map<string, number>()
  const broadcasts: bigint[] = []
  const fetchFn: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { id?: number; method: string; params: string[] }
    calls.set(body.method, (calls.get(body.method) ?? 0) + 1)
    if (body.method === 'eth_sendRawTransaction') {
      const raw = body.params[0]!
      broadcasts.push(Transaction.fromHex(raw).raw.nonce as bigint)
      const refusal = refuse(raw)
      if (refusal !== undefined) return nodeRefusal(body.id, refusal)
    }
    return fetch(input, init)
  }
  return {
    fetch: fetchFn,
    calls,
    broadcasts,
    reset: () => {
      calls.clear()
      broadcasts.length = 0
    },
  }
}

const rowOf = async (h: Harness, id: string) => (await h.service.store.get('sendTransactions', id))!

/** anvil mines a block whose base fee is `baseFee`. */
const mine = (baseFee: bigint) => mineAtBaseFee(chain, baseFee)

/** A worker pass `STEP_MS` on. */
async function pass(h: Harness, worker: { pass(): Promise<void> }) {
  h.clock.advance(STEP_MS)
  await worker.pass()
}

/** The wei the caps counted for send `id` past what it was counted at when signed: its raises. */
async function raisesCounted(h: Harness, id: string): Promise<bigint> {
  const rows = (await h.service.store.all('gasUsage')) as {
    id: string
    sendTransactionId: string
    gas: string
  }[]
  return rows
    .filter((row) => row.sendTransactionId === id && !row.id.startsWith(`${id}.`))
    .reduce((sum, row) => sum + BigInt(row.gas), 0n)
}

describe('a sponsored replacement refused for funds is tried again once the sponsor is refunded', {
  timeout: 180_000,
}, () => {
  it('raised and mined within a replace_after_ms of the refund, the later sponsored send mined too; one try per replace_after_ms while refused; its raise counted once', async () => {
    const node = countingNode()
    const h = await sponsoredService(chain, {}, { worker: false, pollIntervalMs: 250 }, { fetch: node.fetch })
    const worker = startSendWorker(h.service.runtime, { loop: false })
    const sponsor = sponsorAddress(h.service.runtime)!
    await chain.rpc('evm_setAutomine', [false])
    try {
      const user = await endUser(h)
      const id = resultOf(
        'eth_send_transaction',
        await user.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 7n)] }),
      ).sendTransactionStatusId as string
      await worker.pass() // broadcast: the node holds it, unmined
      const first = await rowOf(h, id)
      expect(first.status).toBe('BROADCASTED')
      const firstFee = BigInt(first.fees!.maxFeePerGas)
      const gasLimit = BigInt(first.fees!.gasLimit)
      // As a send signed before its replacements were counted at signing: each raise is counted
      // when it is signed (`countReplacement`), so a raise counted on every refused try would show.
      await h.service.store.transaction(async (tx) => {
        const { prepaidMaxFeePerGas: _, ...rest } = (await tx.get('sendTransactions', id))!
        await tx.put('sendTransactions', rest as SendTransactionRow)
      })
      // The sponsor is left holding the first version's most cost and a little more.
      const most = gasLimit * firstFee
      await chain.fund(sponsor, most + most / 10n)
      // Refused, and tried again, for 10 minutes: never FAILED, never mined (no block is), at most
      // one try of a replacement per replace_after_ms, each going back to the first version.
      node.reset()
      const windowMs = 10 * 60_000
      const passCount = windowMs / STEP_MS
      const statuses = new Set<string>()
      for (let i = 0; i < passCount; i++) {
        await pass(h, worker)
        statuses.add((await rowOf(h, id)).status)
      }
      const waiting = await rowOf(h, id)
      const tries = node.broadcasts.filter((nonce) => nonce === BigInt(first.nonce!)).length
      console.log('10 min refused, a pass every 5 s:', Object.fromEntries(node.calls), 'tries', tries)
      expect(statuses).not.toContain('FAILED')
      expect(await chain.rpc('eth_getTransactionReceipt', [first.txHash])).toBeNull()
      const mostTries = Math.ceil(windowMs / REPLACE_AFTER_MS)
      expect(tries).toBeLessThanOrEqual(mostTries)
      // Each pass its mined count; each try its broadcast and the version it replaced asked for.
      expect(node.calls.get('eth_getTransactionCount')).toBeLessThanOrEqual(passCount)
      expect(node.calls.get('eth_getTransactionByHash') ?? 0).toBeLessThanOrEqual(mostTries)
      const total = [...node.calls.values()].reduce((sum, n) => sum + n, 0)
      expect(total).toBeLessThanOrEqual(passCount + 2 * mostTries)
      // Its raise (25%) counted against the caps once, not once a try.
      const raised = (firstFee * 125n + 99n) / 100n
      expect(await raisesCounted(h, id)).toBe(gasLimit * (raised - firstFee))

      // The operator refunds the sponsor; blocks are mined from now on, each at a base fee above
      // the first version's price and under a raised one's (25% more); another user sends, behind
      // the sponsor's nonce.
      await chain.fund(sponsor, 10n ** 19n)
      const baseFee = firstFee + firstFee / 10n
      await mine(baseFee)
      const other = await endUser(h)
      // (`send` sets the service's clock to real time: the test's is 10 minutes past it.)
      const at = h.clock.now()
      const laterId = resultOf(
        'eth_send_transaction',
        await other.send({ sponsor: true, calls: [erc20Call('mint', other.from, 3n)] }),
      ).sendTransactionStatusId as string
      h.clock.set(at)
      let needed = 0
      for (; needed < 2 * (REPLACE_AFTER_MS / STEP_MS) + 4; needed++) {
        const [send, later] = [await rowOf(h, id), await rowOf(h, laterId)]
        if (send.status !== 'BROADCASTED' && send.status !== 'PENDING' && later.status === 'INCLUDED') break
        await pass(h, worker)
        await mine(baseFee)
      }
      const [mined, later] = [await rowOf(h, id), await rowOf(h, laterId)]
      console.log('passes to both mined after the refund:', needed)
      expect({ send: mined.status, later: later.status }, 'the send still waits at its first price').toEqual({
        send: 'INCLUDED',
        later: 'INCLUDED',
      })
      expect(needed).toBeLessThanOrEqual(REPLACE_AFTER_MS / STEP_MS + 4)
      expect(mined.txHash).not.toBe(first.txHash)
      expect(BigInt(mined.fees!.maxFeePerGas)).toBe(raised)
      const receipt = (await receiptOf(chain, mined.txHash)) as { effectiveGasPrice: string } | null
      expect(BigInt(receipt!.effectiveGasPrice)).toBeGreaterThanOrEqual(baseFee)
      expect(await chain.tokenBalance(DEAD)).toBeGreaterThanOrEqual(7n)
      expect(await chain.tokenBalance(other.from)).toBe(3n)
      // While refused, it went back to its first version after each try (its refused versions
      // counting no replacement), and was tried again: once every replace_after_ms or so.
      expect([...statuses].sort()).toEqual(['BROADCASTED', 'PENDING'])
      expect(waiting).toMatchObject({ status: 'BROADCASTED', txHash: first.txHash, replacements: 0 })
      expect(tries).toBeGreaterThanOrEqual(Math.floor(windowMs / (REPLACE_AFTER_MS + 2 * STEP_MS)))
      // The accepted try counted nothing more: its raise was counted when first signed.
      expect(await raisesCounted(h, id)).toBe(gasLimit * (raised - firstFee))
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await worker.stop()
      await h.service.close()
    }
  })

  it('an unsponsored send whose account was drained: a try each time its replacement is due, looked at only then (backed off), raised and mined once the account is refunded', async () => {
    const node = countingNode()
    const h = await byHandService(chain, node.fetch)
    const worker = startSendWorker(h.service.runtime, { loop: false })
    await chain.rpc('evm_setAutomine', [false])
    try {
      await mine(GWEI / 2n) // the base fee under its price again
      const user = await endUser(h)
      // Enough for 1 wei and 21,000 gas at 2 gwei, not at the 2.5 gwei of a replacement.
      await chain.fund(user.from, 21_000n * 2n * GWEI + 10n ** 12n)
      const id = resultOf(
        'eth_send_transaction',
        await user.send({ calls: [{ to: DEAD, value: '1' }], ...PRICE }),
      ).sendTransactionStatusId as string
      await worker.pass()
      const first = await rowOf(h, id)
      expect(first.status).toBe('BROADCASTED')

      // 30 minutes refused, a pass every 2 s (900 passes): looked at only when its replacement is
      // due again, each look its count, the try and the version it replaced asked for.
      node.reset()
      const windowMs = 30 * 60_000
      const statuses = new Set<string>()
      for (let i = 0; i < windowMs / 2000; i++) {
        h.clock.advance(2000)
        await worker.pass()
        statuses.add((await rowOf(h, id)).status)
      }
      const tries = node.broadcasts.length
      const total = [...node.calls.values()].reduce((sum, n) => sum + n, 0)
      console.log('30 min refused, a pass every 2 s:', Object.fromEntries(node.calls), 'tries', tries)
      expect(statuses).not.toContain('FAILED')
      expect(tries).toBeLessThanOrEqual(windowMs / REPLACE_AFTER_MS)
      // Its first replace_after_ms looked at each pass (30), then 3 calls a try, and a few more.
      expect(total).toBeLessThanOrEqual(REPLACE_AFTER_MS / 2000 + 3 * tries + 6)

      // Refunded, each block at a base fee above its first price: raised and mined within one
      // backed-off look (at most 5 minutes) and a pass.
      await chain.fund(user.from, 10n ** 16n)
      await mine(2n * GWEI + GWEI / 5n)
      let needed = 0
      for (; needed < (WAITING_LOOK_AT_MOST_MS + REPLACE_AFTER_MS) / 2000 + 4; needed++) {
        if ((await rowOf(h, id)).status === 'INCLUDED') break
        h.clock.advance(2000)
        await worker.pass()
        await mine(2n * GWEI + GWEI / 5n)
      }
      const mined = await rowOf(h, id)
      expect(mined.status, 'the send still waits at its first price').toBe('INCLUDED')
      expect(mined.txHash).not.toBe(first.txHash)
      expect(mined.fees!.maxFeePerGas).toBe(String((2n * GWEI * 125n) / 100n))
      expect(mined.replacements).toBe(1)
      // Tried again while refused, not left at its first price.
      expect(tries).toBeGreaterThanOrEqual(2)
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await worker.stop()
      await h.service.close()
    }
  })
})
