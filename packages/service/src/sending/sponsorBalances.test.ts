import { describe, expect, it } from 'vitest'
import { createService } from '../assembly/createService.ts'
import { createMetrics, type Metrics } from '../observability/metrics.ts'
import { watchSponsorBalances } from './sponsorBalances.ts'
import { sponsorAddress } from './sponsors.ts'

const CHAIN = 'eip155:31337'
const SOLANA = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1'

/** A node answering balances through `fetch`, counting calls; `down` makes it unreachable. */
function stubNode(wei: bigint, lamports: number) {
  const node = { calls: 0, down: false, wei, lamports }
  const fetch = (async (_input: RequestInfo | URL, init?: RequestInit) => {
    node.calls++
    if (node.down) throw new Error('connect ECONNREFUSED 127.0.0.1:1')
    const { id, method } = JSON.parse(String(init?.body)) as { id: number; method: string }
    const result =
      method === 'eth_getBalance'
        ? `0x${node.wei.toString(16)}`
        : { context: { slot: 1 }, value: node.lamports }
    return new Response(JSON.stringify({ jsonrpc: '2.0', id, result }))
  }) as typeof globalThis.fetch
  return { node, fetch }
}

async function sponsoredService(fetch: typeof globalThis.fetch, metrics: Metrics) {
  return createService({
    fetch,
    events: metrics,
    rpc: { [CHAIN]: 'http://node.test', [SOLANA]: 'http://solana.test' },
    sending: { worker: false },
    sponsorship: { delegates: { [CHAIN]: '0x00000000000000000000000000000000000000d1' } },
  })
}

describe('watchSponsorBalances', () => {
  it('reads each sponsor on each chain in the background; readiness and metrics read the last look, and a low balance leaves the service ready', async () => {
    const { node, fetch } = stubNode(10n ** 15n, 5000)
    const metrics = createMetrics({ process: false })
    const service = await sponsoredService(fetch, metrics)
    const watch = watchSponsorBalances(service.runtime, {
      lowWei: 10n ** 16n,
      lowLamports: 1000n,
      evmChains: [CHAIN],
    })
    try {
      await watch.refresh()
      const report = await service.readiness()
      expect(report.ready).toBe(true)
      expect(report.sponsors).toEqual([
        {
          owner: 'default',
          family: 'eip155',
          address: sponsorAddress(service.runtime, 'default', 'eip155'),
          caip2: CHAIN,
          balance: String(10n ** 15n),
          low: true,
          checkedAt: expect.any(Number),
        },
        {
          owner: 'default',
          family: 'solana',
          address: sponsorAddress(service.runtime, 'default', 'solana'),
          caip2: SOLANA,
          balance: '5000',
          low: false,
          checkedAt: expect.any(Number),
        },
      ])
      const calls = node.calls
      for (let i = 0; i < 20; i++) await service.readiness()
      const text = await metrics.render()
      expect(node.calls).toBe(calls)
      expect(text).toContain(
        `latchkey_sponsor_balance_low{owner="default",family="eip155",caip2="${CHAIN}"} 1`,
      )
      expect(text).toContain(
        `latchkey_sponsor_balance{owner="default",family="solana",caip2="${SOLANA}"} 5000`,
      )

      // Funded: the next look clears it. Node down: the last balance read stands.
      node.wei = 10n ** 18n
      await watch.refresh()
      expect(watch.latest()[0]).toMatchObject({ balance: String(10n ** 18n), low: false })
      node.down = true
      await watch.refresh()
      expect(watch.latest()[0]).toMatchObject({ balance: String(10n ** 18n), low: false })
    } finally {
      watch.stop()
      await service.close()
    }
  })

  it('without a threshold or an answer, low is null and the gauge of it absent', async () => {
    const { node, fetch } = stubNode(0n, 0)
    node.down = true
    const metrics = createMetrics({ process: false })
    const service = await sponsoredService(fetch, metrics)
    const watch = watchSponsorBalances(service.runtime, { evmChains: [CHAIN] })
    try {
      await watch.refresh()
      expect(watch.latest().map(({ balance, low }) => ({ balance, low }))).toEqual([
        { balance: null, low: null },
        { balance: null, low: null },
      ])
      expect(await metrics.render()).not.toMatch(/^latchkey_sponsor_balance(_low)?\{/m)
      node.down = false
      await watch.refresh()
      expect(watch.latest().map(({ balance, low }) => ({ balance, low }))).toEqual([
        { balance: '0', low: null },
        { balance: '0', low: null },
      ])
    } finally {
      watch.stop()
      await service.close()
    }
  })
})
