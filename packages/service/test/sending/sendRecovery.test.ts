import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDataDir } from '../../src/kernel/store/durableStores.ts'
import { createMetrics } from '../../src/observability/metrics.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  resultOf,
} from '../../src/testing/harness.ts'
import { type Chain, startChain, waitForSend } from './sendSupport.ts'

let chain: Chain
const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dead'

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

async function fundedAccount(h: Harness): Promise<string> {
  const { addresses } = resultOf(
    'create_wallet',
    await h.submit('create_wallet', { walletName: 'R', accounts: [ETHEREUM_ACCOUNT] }),
  )
  await chain.fund(addresses[0], 10n ** 18n)
  return addresses[0]
}

/** The transactions the node has seen from `from` (mined), by nonce. */
const minedCount = async (from: string) =>
  Number(BigInt((await chain.rpc('eth_getTransactionCount', [from, 'latest'])) as string))

describe('sends survive what happens between commit and inclusion', () => {
  it('a node that cannot be reached leaves the send pending; it completes once the node answers', async () => {
    let reachable = true
    const fetchThrough: typeof fetch = (input, init) =>
      reachable ? fetch(input, init) : Promise.reject(new TypeError('fetch failed: connect ECONNREFUSED'))
    const h = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: { [CAIP2]: chain.url },
      fetch: fetchThrough,
      sending: { worker: false, pollIntervalMs: 20 },
    })
    const from = await fundedAccount(h)
    h.clock.set(Date.now())
    const reply = await h.submit('eth_send_transaction', {
      from,
      caip2: CAIP2,
      calls: [{ to: DEAD, value: '5' }],
    })
    const { sendTransactionStatusId } = resultOf('eth_send_transaction', reply)
    reachable = false
    const worker = startSendWorker(h.service.runtime)
    try {
      await worker.pass()
      const pending = await h.query('get_send_transaction_status', { sendTransactionStatusId })
      expect(pending.body).toMatchObject({ txStatus: 'PENDING' })
      expect(
        (await h.service.store.get('sendTransactions', sendTransactionStatusId))?.attempts,
      ).toBeGreaterThan(0)
      expect(await minedCount(from)).toBe(0)
      reachable = true
      expect(await waitForSend(h, sendTransactionStatusId, { timeoutMs: 15_000 })).toMatchObject({
        txStatus: 'INCLUDED',
      })
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })

  it('a send past its replacements that the node dropped from its pool is given to it again, and mined', async () => {
    const metrics = createMetrics({ process: false })
    const h = await createHarness({
      events: metrics,
      clock: fakeClock(Date.now()),
      rpc: { [CAIP2]: chain.url },
      sending: { pollIntervalMs: 20, replaceAfterMs: 150, maxReplacements: 0 },
    })
    const from = await fundedAccount(h)
    await chain.rpc('evm_setAutomine', [false])
    try {
      h.clock.set(Date.now())
      const { sendTransactionStatusId: id } = resultOf(
        'eth_send_transaction',
        await h.submit('eth_send_transaction', { from, caip2: CAIP2, calls: [{ to: DEAD, value: '5' }] }),
      )
      const known = (hash: string) => chain.rpc('eth_getTransactionByHash', [hash])
      const until = async (check: () => Promise<boolean>) => {
        for (const end = Date.now() + 10_000; !(await check()); ) {
          if (Date.now() > end) throw new Error('timed out')
          h.clock.set(Date.now())
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
      }
      await until(async () => (await h.service.store.get('sendTransactions', id))?.status === 'BROADCASTED')
      const { txHash } = (await h.service.store.get('sendTransactions', id))!
      // The node loses it (evicted from its pool, or restarted): no replacement is left to send.
      await chain.rpc('anvil_dropTransaction', [txHash])
      expect(await known(txHash)).toBeNull()
      await until(async () => Boolean(await known(txHash)))
      await chain.rpc('evm_mine', [])
      expect(await waitForSend(h, id)).toMatchObject({ txStatus: 'INCLUDED' })
      expect(await minedCount(from)).toBe(1)
      // Counted for the operator: once, by the node taking it (each later look found it in the pool).
      expect(await metrics.render()).toContain(
        'latchkey_send_rebroadcasts_total{chain="eip155",accepted="true"} 1',
      )
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await h.service.close()
    }
  })

  it('a service stopped between commit and broadcast broadcasts the send once after it restarts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-send-'))
    const masterKey = crypto.getRandomValues(new Uint8Array(32))
    const options = { clock: fakeClock(Date.now()), rpc: { [CAIP2]: chain.url }, masterKey }
    try {
      const first = await createHarness({
        ...options,
        store: await openDataDir(dir),
        sending: { worker: false },
      })
      const from = await fundedAccount(first)
      first.clock.set(Date.now())
      const reply = await first.submit('eth_send_transaction', {
        from,
        caip2: CAIP2,
        calls: [{ to: DEAD, value: '6' }],
      })
      const { sendTransactionStatusId } = resultOf('eth_send_transaction', reply)
      const dev = first.service.dev
      await first.service.close()
      expect(await minedCount(from)).toBe(0)

      const second = await createHarness({
        ...options,
        store: await openDataDir(dir),
        dev: { apiPrivateKey: dev.apiPrivateKey },
        sending: { pollIntervalMs: 20 },
      })
      try {
        expect(await waitForSend(second, sendTransactionStatusId)).toMatchObject({ txStatus: 'INCLUDED' })
        expect(await minedCount(from)).toBe(1)
        const row = await second.service.store.get('sendTransactions', sendTransactionStatusId)
        expect(row).toMatchObject({ attempts: 1, replacements: 0 })
      } finally {
        await second.service.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
