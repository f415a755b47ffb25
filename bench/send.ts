/**
 * Sending throughput on anvil with automine: sends/s and p50/p99 from submit to INCLUDED, with one
 * service instance, and with two on one PostgreSQL database when LATCHKEY_BENCH_POSTGRES names one
 * (an empty database); printed beside sign_transaction's rate on the same instance. Not a test.
 * Run: npx tsx bench/send.ts
 */
import { serializeTransaction } from 'viem'
import type { CreateServiceOptions } from '../packages/service/src/assembly/createService.ts'
import { openPostgres } from '../packages/service/src/kernel/store/durableStores.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  resultOf,
} from '../packages/service/src/testing/harness.ts'
import { startEvmNode } from '../scripts/evmNode.mjs'
import { median, printTable } from './printTable.ts'

const CAIP2 = 'eip155:31337'
const ACCOUNTS = 8
const SENDS_PER_ACCOUNT = 10
const DEAD = '0x000000000000000000000000000000000000dead'

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

/** The service's clock follows real time (the chain's blocks carry real time). */
function realTime(h: Harness): () => void {
  const tick = setInterval(() => h.clock.set(Date.now()), 5)
  return () => clearInterval(tick)
}

async function untilIncluded(h: Harness, id: string): Promise<void> {
  for (;;) {
    const reply = await h.query('get_send_transaction_status', { sendTransactionStatusId: id })
    if (reply.body.txStatus === 'INCLUDED') return
    if (reply.body.txStatus === 'FAILED') throw new Error(`send ${id} failed: ${reply.body.txError}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** `ACCOUNTS` accounts each send `SENDS_PER_ACCOUNT` transfers at once, round-robin over `instances`. */
async function run(instances: Harness[], fund: (address: string) => Promise<void>) {
  const [first] = instances as [Harness]
  const addresses: string[] = []
  for (let i = 0; i < ACCOUNTS; i++) {
    const { addresses: created } = resultOf(
      'create_wallet',
      await first.submit('create_wallet', { walletName: `bench ${i}`, accounts: [ETHEREUM_ACCOUNT] }),
    )
    await fund(created[0])
    addresses.push(created[0])
  }
  const latencies: number[] = []
  const start = performance.now()
  let n = 0
  await Promise.all(
    addresses.flatMap((from) =>
      Array.from({ length: SENDS_PER_ACCOUNT }, async () => {
        const h = instances[n++ % instances.length]!
        const submitted = performance.now()
        const reply = await h.submit('eth_send_transaction', {
          from,
          caip2: CAIP2,
          calls: [{ to: DEAD, value: '1' }],
        })
        await untilIncluded(h, resultOf('eth_send_transaction', reply).sendTransactionStatusId)
        latencies.push(performance.now() - submitted)
      }),
    ),
  )
  const seconds = (performance.now() - start) / 1000
  return { perSecond: latencies.length / seconds, p50: median(latencies), p99: percentile(latencies, 99) }
}

/** sign_transaction activities per second on one instance, 8 at a time. */
async function signRate(h: Harness): Promise<number> {
  const { addresses } = resultOf(
    'create_wallet',
    await h.submit('create_wallet', { walletName: 'sign', accounts: [ETHEREUM_ACCOUNT] }),
  )
  const unsignedTransaction = serializeTransaction({
    type: 'eip1559',
    chainId: 31337,
    nonce: 0,
    maxFeePerGas: 2n * 10n ** 9n,
    maxPriorityFeePerGas: 10n ** 9n,
    gas: 21000n,
    to: DEAD,
    value: 1n,
  })
  let count = 0
  const until = performance.now() + 2000
  const start = performance.now()
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < until) {
        const reply = await h.submit('sign_transaction', {
          signWith: addresses[0],
          type: 'TRANSACTION_TYPE_ETHEREUM',
          unsignedTransaction,
        })
        if (reply.status !== 200) throw new Error(`sign_transaction: ${reply.status}`)
        count++
      }
    }),
  )
  return (count * 1000) / (performance.now() - start)
}

const node = await startEvmNode()
const fund = (address: string) =>
  node.rpc('anvil_setBalance', [address, `0x${(10n ** 20n).toString(16)}`]).then(() => {})
const options: CreateServiceOptions = { rpc: { [CAIP2]: node.url }, sending: { pollIntervalMs: 10 } }
const rows: string[][] = []
try {
  const one = await createHarness({ ...options, clock: fakeClock(Date.now()) })
  const stop = realTime(one)
  const single = await run([one], fund)
  const signing = await signRate(one)
  rows.push([
    '1 instance (memory SQLite)',
    single.perSecond.toFixed(1),
    single.p50.toFixed(0),
    single.p99.toFixed(0),
    signing.toFixed(0),
  ])
  stop()
  await one.service.close()

  const postgres = process.env.LATCHKEY_BENCH_POSTGRES
  if (postgres) {
    const masterKey = crypto.getRandomValues(new Uint8Array(32))
    const apiPrivateKey = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')
    const clock = fakeClock(Date.now())
    const shared = { ...options, clock, masterKey, dev: { apiPrivateKey } }
    const a = await createHarness({ ...shared, store: await openPostgres(postgres) })
    const b = await createHarness({ ...shared, store: await openPostgres(postgres) })
    const stops = [realTime(a), realTime(b)]
    const two = await run([a, b], fund)
    rows.push([
      '2 instances (PostgreSQL)',
      two.perSecond.toFixed(1),
      two.p50.toFixed(0),
      two.p99.toFixed(0),
      '',
    ])
    for (const s of stops) s()
    await a.service.close()
    await b.service.close()
  } else rows.push(['2 instances (PostgreSQL)', 'set LATCHKEY_BENCH_POSTGRES', '', '', ''])
} finally {
  await node.close()
}
console.log(`node ${process.version}; ${ACCOUNTS} accounts x ${SENDS_PER_ACCOUNT} sends, anvil automine`)
printTable(['setup', 'sends/s', 'p50 ms', 'p99 ms', 'sign_transaction/s'], rows)
