// A user's fill whose first broadcast answer was lost (the gateway forwarded it, the node mined it,
// the gateway answered 504) and whose retry was refused ("txpool is full") is signed again
// (`refill`) at the market's new price. The version it replaces may be on a node (its answer was
// lost), so it stays tracked (`priorHashes`): when the new version meets "nonce too low", the first
// version's receipt is found, the fill ends INCLUDED and the limit keeps the fee it paid. `refill`
// recorded the earlier version only once the fill had a broadcast time, which a lost answer never
// gives, and the nonce-too-low failure gave the reservation back: the limit no longer counted a fee
// the account paid. (The same 504-then-refusal gateway as lostBroadcastAnswer.test.ts, on a fill.)
import { Transaction } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { fillIdOf } from '../../src/sending/evmSender.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { limitedSubOrganization } from '../../src/testing/harness.ts'
import { byHandService, CAIP2, chainForFile, GWEI, nodeRefusal, transfers } from '../sending/byHand.ts'
import { passUntil, receiptOf } from '../sending/sendSupport.ts'

const chain = chainForFile()

const raw = (hex: string) => Transaction.fromHex(hex).raw as { value: bigint; to: string }

/**
 * The operator's gateway: refuses the 7-wei transfer (insufficient funds); a fill (a 0-value
 * transfer to the sender itself) is forwarded to the node the first time and answered 504, and its
 * retry is answered "txpool is full". Everything else reaches the node.
 */
function gateway(from: () => string) {
  let fillSends = 0
  const fetchFn: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { id: number; method: string; params: string[] }
    if (body.method === 'eth_sendRawTransaction') {
      const tx = raw(body.params[0]!)
      if (tx.value === 7n) return nodeRefusal(body.id, 'insufficient funds for gas * price + value')
      if (tx.value === 0n && tx.to.toLowerCase() === from().toLowerCase()) {
        fillSends++
        if (fillSends === 1) {
          await fetch(input, init) // the node takes it
          return new Response('<html><body>504 Gateway Time-out</body></html>', { status: 504 })
        }
        if (fillSends === 2) return nodeRefusal(body.id, 'txpool is full')
      }
    }
    return fetch(input, init)
  }
  return fetchFn
}

describe('a fill whose broadcast answer was lost', { timeout: 60_000 }, () => {
  it('keeps counting the fee its mined first version paid', async () => {
    let from = ''
    const h = await byHandService(
      chain,
      gateway(() => from),
      { pollIntervalMs: 20 },
    )
    try {
      const limited = await limitedSubOrganization(h, { amount: String(10n ** 17n), caip2: CAIP2 })
      from = limited.from
      await chain.fund(from, 10n ** 18n)
      const start = await chain.balance(from)
      const send = transfers(h, from, limited, { followTime: true })
      const first = await send(7n) // refused by the node
      await send(8n) // the next nonce: the first's is filled
      const worker = startSendWorker(h.service.runtime, { loop: false })
      const pass = async () => {
        h.clock.advance(60_000)
        await worker.pass()
      }
      await pass() // the first refused -> FAILED, fill made; the second broadcast
      const fillId = fillIdOf(first)
      expect((await h.service.store.get('sendTransactions', fillId))?.status).toBe('PENDING')
      await pass() // fill v1 forwarded and mined, answer 504: attempts 1, still PENDING
      const v1 = (await h.service.store.get('sendTransactions', fillId))!
      expect([v1.status, v1.attempts, v1.broadcastAt]).toEqual(['PENDING', 1, undefined])
      // anvil mines it just after it answered the broadcast: waited for, not asked once.
      const v1Receipt = await receiptOf(chain, v1.txHash)
      // Control: the first version of the fill is mined, its fee paid by the account.
      expect(v1Receipt?.status).toBe('0x1')
      await pass() // the retry "txpool is full" -> signed again at the market's price
      const v2 = (await h.service.store.get('sendTransactions', fillId))!
      // Control: the fill was signed again, as a new transaction.
      expect([v2.status, v2.txHash === v1.txHash]).toEqual(['PENDING', false])
      await pass() // the new version: "nonce too low"
      await pass()
      await worker.stop()
      const fill = (await h.service.store.get('sendTransactions', fillId))!
      const rows = await h.service.store.all('sendTransactions')
      const lost = start - (await chain.balance(from))
      const listed = (await h.query('latchkey_list_spending_limits', {}, limited)).body.spendingLimits as {
        spendingLimitId: string
        used: string
      }[]
      const used = BigInt(listed.find((l) => l.spendingLimitId === limited.spendingLimitId)!.used)
      const report = {
        fillStatus: fill.status,
        fillError: fill.error?.message,
        fillTxHash: fill.txHash === v1.txHash ? 'v1' : fill.txHash === v2.txHash ? 'v2' : fill.txHash,
        fillPriorHashes: fill.priorHashes ?? [],
        v1Fee: (BigInt(v1Receipt!.gasUsed) * BigInt(v1Receipt!.effectiveGasPrice)).toString(),
        accountLost: lost.toString(),
        limitUsed: used.toString(),
        sends: rows.map((r) => [r.id === first ? 'first' : r.id === fillId ? 'fill' : 'next', r.status]),
      }
      // Safe: the limit counts at least what the account lost (values and every fee it paid).
      expect(used, JSON.stringify(report)).toBeGreaterThanOrEqual(lost)
      // The first version, mined, is the fill's: tracked beside the new one, and what it paid is kept.
      expect([report.fillStatus, report.fillTxHash, report.fillPriorHashes], JSON.stringify(report)).toEqual([
        'INCLUDED',
        'v1',
        [v1.txHash],
      ])
    } finally {
      await h.service.close()
    }
  })
})

/**
 * A gateway that refuses the 7-wei transfer (insufficient funds) and the first `refusals` broadcasts
 * of a fill ("txpool is full"), none of them forwarded, and answers each `eth_maxPriorityFeePerGas`
 * a wei more than the last: every refill is a new transaction.
 */
function refusingFills(from: () => string, refusals: number) {
  let fillSends = 0
  let tips = 0n
  const answer = (id: number, result: string) =>
    new Response(JSON.stringify({ jsonrpc: '2.0', id, result }), {
      headers: { 'content-type': 'application/json' },
    })
  const fetchFn: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { id: number; method: string; params: string[] }
    if (body.method === 'eth_maxPriorityFeePerGas')
      return answer(body.id, `0x${(GWEI + ++tips).toString(16)}`)
    if (body.method === 'eth_sendRawTransaction') {
      const tx = raw(body.params[0]!)
      if (tx.value === 7n) return nodeRefusal(body.id, 'insufficient funds for gas * price + value')
      if (tx.value === 0n && tx.to.toLowerCase() === from().toLowerCase() && ++fillSends <= refusals)
        return nodeRefusal(body.id, 'txpool is full')
    }
    return fetch(input, init)
  }
  return fetchFn
}

describe('a fill only ever refused', { timeout: 60_000 }, () => {
  it('is signed again without tracking the versions no node took', async () => {
    let from = ''
    const h = await byHandService(
      chain,
      refusingFills(() => from, 3),
      { pollIntervalMs: 20 },
    )
    try {
      const limited = await limitedSubOrganization(h, { amount: String(10n ** 17n), caip2: CAIP2 })
      from = limited.from
      await chain.fund(from, 10n ** 18n)
      const send = transfers(h, from, limited, { followTime: true })
      const first = await send(7n)
      await send(8n)
      const worker = startSendWorker(h.service.runtime, { loop: false })
      const fillId = fillIdOf(first)
      const hashes = new Set<string>()
      for (let i = 0; i < 4; i++) {
        h.clock.advance(60_000)
        await worker.pass()
        const fill = await h.service.store.get('sendTransactions', fillId)
        if (fill) hashes.add(fill.txHash)
      }
      const refilled = (await h.service.store.get('sendTransactions', fillId))!
      // Control: refused three times, signed again each time as a new transaction.
      expect([refilled.status, refilled.attempts, hashes.size]).toEqual(['PENDING', 3, 4])
      // No node took those versions: none is asked about on every pass for good.
      expect(refilled.priorHashes ?? []).toEqual([])
      // Broadcast, then passes until it is final (anvil mines it just after it answers), bounded.
      await passUntil(
        h,
        worker,
        async () =>
          !['PENDING', 'BROADCASTED'].includes(
            (await h.service.store.get('sendTransactions', fillId))!.status,
          ),
        { stepMs: 60_000 },
      )
      await worker.stop()
      const fill = (await h.service.store.get('sendTransactions', fillId))!
      expect([fill.status, fill.txHash]).toEqual(['INCLUDED', refilled.txHash])
    } finally {
      await h.service.close()
    }
  })
})
