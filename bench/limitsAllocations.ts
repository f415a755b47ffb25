// What a `sign_transaction` allocates on the service's thread with a spending limit in force,
// against the same signing without one (issue 37): a figure the machine's speed does not move,
// unlike the throughput ratio `bench/service.ts --only limits-pg` prints (bench/README.md).
//
// One service in this process (the test harness: requests go to the app without sockets) on a
// database of its own in a throwaway PostgreSQL; `--accounts` sub-organizations, each with one
// Ethereum account under a daily limit far above what the run spends, and as many under none;
// `--requests` signings of 1 wei a run, `--concurrency` at once, account i mod the count. Each
// round runs without, with, with, without. The inspector's sampling heap profiler counts every
// allocation of the thread, collected or not (one sample each `--interval` bytes on average), so
// a run's sampled bytes over its signings estimate what one signing allocates.
//
//   npx tsx bench/limitsAllocations.ts [--requests 2000] [--rounds 2] [--accounts 50] [--concurrency 200]
import { Session } from 'node:inspector/promises'
import { parseArgs } from 'node:util'
import {
  ETHEREUM_ACCOUNT,
  type Harness,
  limitedSubOrganization,
} from '../packages/service/src/testing/harness.ts'
import { unsignedTransfer } from '../packages/service/src/testing/unsignedTransfer.ts'
import { deploymentOn } from '../packages/service/test/support/twoInstances.ts'
import { startPostgres } from '../scripts/postgres.mjs'
import { median } from './printTable.ts'

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '2' },
    accounts: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '200' },
    interval: { type: 'string', default: '4096' },
    top: { type: 'string', default: '15' },
  },
})
const REQUESTS = Number(flags.requests)
const ROUNDS = Number(flags.rounds)
const ACCOUNTS = Number(flags.accounts)
const CONCURRENCY = Number(flags.concurrency)
const INTERVAL = Number(flags.interval)

/** A sub-organization with one Ethereum account, under a limit far above the run when `limited`. */
async function account(h: Harness, limited: boolean) {
  if (limited) return limitedSubOrganization(h, { amount: String(10n ** 30n) })
  const sub = await h.createSubOrganization({ wallet: { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] } })
  return { as: sub.keys[0]!, organizationId: sub.organizationId, from: sub.addresses![0]! }
}

type Account = Awaited<ReturnType<typeof account>>
type Node = {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: Node[]
}

let nonce = 0
/** `count` signings over `accounts`, `CONCURRENCY` at once; every one must sign. */
async function sign(h: Harness, accounts: Account[], count: number): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) {
        const signer = accounts[i % accounts.length]!
        const reply = await h.submit(
          'sign_transaction',
          {
            signWith: signer.from,
            type: 'TRANSACTION_TYPE_ETHEREUM',
            unsignedTransaction: unsignedTransfer({ value: 1n, nonce: nonce++ }),
          },
          { as: signer.as, organizationId: signer.organizationId },
        )
        if (reply.status !== 200)
          throw new Error(`sign_transaction: ${reply.status} ${JSON.stringify(reply.body)}`)
      }
    }),
  )
}

/** One run's bytes allocated a signing (sampled), by function, and its CPU a signing (ms). */
async function measured(session: Session, h: Harness, accounts: Account[]) {
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: INTERVAL,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  })
  const cpu = process.cpuUsage()
  await sign(h, accounts, REQUESTS)
  const used = process.cpuUsage(cpu)
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
    profile: { head: Node }
  }
  const byFunction = new Map<string, number>()
  let total = 0
  const walk = (node: Node) => {
    const { functionName, url, lineNumber } = node.callFrame
    const name = `${functionName || '(anonymous)'} ${url.split('/').slice(-1)[0]}:${lineNumber + 1}`
    byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize / REQUESTS)
    total += node.selfSize
    for (const child of node.children) walk(child)
  }
  walk(profile.head)
  return { bytes: total / REQUESTS, byFunction, cpuMs: (used.user + used.system) / 1000 / REQUESTS }
}

const cluster = await startPostgres()
try {
  const h = await deploymentOn(cluster, 'allocations', { clock: { now: () => Date.now() } }).open()
  const limited: Account[] = []
  const free: Account[] = []
  for (let n = 0; n < ACCOUNTS; n++) {
    limited.push(await account(h, true))
    free.push(await account(h, false))
  }
  // Warm-up: the code paths compiled, the usage rows as long as a busy limit's.
  await sign(h, free, REQUESTS)
  await sign(h, limited, REQUESTS)
  const session = new Session()
  session.connect()
  const runs: Record<'off' | 'on', Awaited<ReturnType<typeof measured>>[]> = { off: [], on: [] }
  for (let round = 0; round < ROUNDS; round++)
    for (const side of ['off', 'on', 'on', 'off'] as const)
      runs[side].push(await measured(session, h, side === 'on' ? limited : free))
  session.disconnect()
  const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`
  const bytes = { off: median(runs.off.map((run) => run.bytes)), on: median(runs.on.map((run) => run.bytes)) }
  const cpu = { off: median(runs.off.map((run) => run.cpuMs)), on: median(runs.on.map((run) => run.cpuMs)) }
  console.log(
    `sign_transaction on PostgreSQL, ${ACCOUNTS} sub-organizations a side, ${CONCURRENCY} at once, ${ROUNDS} rounds of ${REQUESTS} a run (ABBA):`,
  )
  console.log(
    `  allocated on the service's thread a signing (median of runs): limited ${kB(bytes.on)}, no limit ${kB(bytes.off)} (${(bytes.on / bytes.off).toFixed(2)}×; runs: ${runs.on.map((run) => kB(run.bytes)).join(', ')} / ${runs.off.map((run) => kB(run.bytes)).join(', ')})`,
  )
  console.log(
    `  this process's CPU a signing (its threads, the crypto workers too; moves with the machine): limited ${cpu.on.toFixed(2)} ms, no limit ${cpu.off.toFixed(2)} ms`,
  )
  // Where the difference is: each function's bytes a signing, the median over the side's runs.
  const names = new Set(
    Object.values(runs).flatMap((side) => side.flatMap((run) => [...run.byFunction.keys()])),
  )
  const of = (side: 'off' | 'on', name: string) =>
    median(runs[side].map((run) => run.byFunction.get(name) ?? 0))
  const rows = [...names].map((name) => ({ name, on: of('on', name), off: of('off', name) }))
  rows.sort((a, b) => b.on - b.off - (a.on - a.off))
  console.log(
    `  the functions that allocate more a signing with a limit (self, bytes a signing: limited / none):`,
  )
  for (const row of rows.slice(0, Number(flags.top)))
    console.log(
      `    +${(row.on - row.off).toFixed(0).padStart(6)}  ${row.on.toFixed(0).padStart(6)} / ${row.off.toFixed(0).padStart(6)}  ${row.name}`,
    )
  console.log(`  and those that allocate less (the path an unlimited signing takes instead):`)
  for (const row of rows.slice(-Math.ceil(Number(flags.top) / 2)).reverse())
    console.log(
      `    ${(row.on - row.off).toFixed(0).padStart(7)}  ${row.on.toFixed(0).padStart(6)} / ${row.off.toFixed(0).padStart(6)}  ${row.name}`,
    )
  await h.service.close()
} finally {
  await cluster.dispose()
}
process.exit(0)
