// What a `sign_transaction` costs the service with a spending limit in force, against the same
// signing without one (issue 37), in figures the machine's speed moves less than the throughput
// ratio `bench/service.ts --only limits-pg` prints (bench/README.md): the bytes it allocates, and
// the CPU it takes of the service and of PostgreSQL.
//
// One service in this process (the test harness: requests go to the app without sockets) on a
// database of its own in a throwaway PostgreSQL; `--accounts` sub-organizations, each with one
// Ethereum account under a daily limit far above what the run spends, and as many under none;
// `--requests` signings of 1 wei a run, `--concurrency` at once, account i mod the count, each
// request stamped before its run starts (so the process's CPU is the service's, its crypto too:
// the harness signs on this thread). Each round runs without, with, with, without. Per run it
// prints how the signings went to the database (lock groups, shared reads and inserts).
//
// `--profile heap` (the default): the inspector's sampling heap profiler counts every allocation
// of the thread, collected or not (one sample each `--interval` bytes on average), so a run's
// sampled bytes over its signings estimate what one signing allocates; the functions listed
// allocate the difference themselves (self). `--profile cpu`: the CPU profiler's samples of the
// main thread, and each function's time a signing with what it calls (inclusive), `--match` to
// list only functions whose name or file holds that text (`.ts:` for the service's own).
// `--profile none`: the CPU figures alone, without a profiler's overhead.
//
//   npx tsx bench/limitsAllocations.ts [--requests 2000] [--rounds 2] [--accounts 50] [--concurrency 200]
//     [--profile heap|cpu|none] [--match text] [--top 15]
import { Session } from 'node:inspector/promises'
import { parseArgs } from 'node:util'
import { ACTIVITIES } from '@latchkey/protocol'
import {
  ETHEREUM_ACCOUNT,
  type Harness,
  limitedSubOrganization,
} from '../packages/service/src/testing/harness.ts'
import { unsignedTransfer } from '../packages/service/src/testing/unsignedTransfer.ts'
import { deploymentOn } from '../packages/service/test/support/twoInstances.ts'
import { startPostgres } from '../scripts/postgres.mjs'
import { median } from './printTable.ts'
import { contextSwitches, processCpu } from './processCpu.ts'

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '2' },
    accounts: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '200' },
    interval: { type: 'string', default: '4096' },
    top: { type: 'string', default: '15' },
    profile: { type: 'string', default: 'heap' },
    match: { type: 'string', default: '' },
  },
})
const REQUESTS = Number(flags.requests)
const ROUNDS = Number(flags.rounds)
const ACCOUNTS = Number(flags.accounts)
const CONCURRENCY = Number(flags.concurrency)
const INTERVAL = Number(flags.interval)
/** What is profiled during the runs: allocations (`heap`), the main thread's time (`cpu`) or nothing. */
const PROFILE = flags.profile as 'heap' | 'cpu' | 'none'
if (!['heap', 'cpu', 'none'].includes(PROFILE)) throw new Error('--profile: heap, cpu or none')

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
/** A signing request, stamped ahead: the run's CPU is then the service's, not the stamping's. */
interface Prepared {
  account: Account
  parameters: Record<string, string>
  timestampMs: string
  stamp: [string, string]
}

/**
 * `count` signings over `accounts`, account i mod their count, each stamped by its account. The
 * stamping yields to the event loop every 100 requests: the service runs in this process, and a
 * loop held for the whole stamping (15–20 s for 8,000) would hold whatever the service has in
 * flight with it, until pg's `query_timeout` drops the connection under it (503s no service sees).
 */
async function prepare(accounts: Account[], count: number): Promise<Prepared[]> {
  const type = ACTIVITIES.sign_transaction.type
  const prepared: Prepared[] = []
  for (let i = 0; i < count; i++) {
    if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve))
    const account = accounts[i % accounts.length]!
    const parameters = {
      signWith: account.from,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: unsignedTransfer({ value: 1n, nonce: nonce++ }),
    }
    const timestampMs = String(Date.now())
    // The body as the harness writes it (its fields in its order), so the stamp signs what is sent.
    const body = JSON.stringify({ type, timestampMs, organizationId: account.organizationId, parameters })
    prepared.push({ account, parameters, timestampMs, stamp: account.as.stamp(body) })
  }
  return prepared
}

/** Sends `requests`, `CONCURRENCY` at once; every one must sign. */
async function sign(h: Harness, requests: Prepared[]): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < requests.length; i = next++) {
        const { account, parameters, timestampMs, stamp } = requests[i]!
        const reply = await h.submit('sign_transaction', parameters, {
          as: { stamp: () => stamp },
          organizationId: account.organizationId,
          timestampMs,
        })
        if (reply.status !== 200)
          throw new Error(`sign_transaction: ${reply.status} ${JSON.stringify(reply.body)}`)
      }
    }),
  )
}

/**
 * One run: what `--profile` profiles a signing (bytes allocated, or µs of the main thread), in all
 * (`profiled`) and by function; the CPU a signing (ms) of this process (the service, its crypto
 * workers; the requests were stamped ahead), of its main thread, and of PostgreSQL.
 */
async function measured(session: Session, h: Harness, requests: Prepared[], dataDir: string) {
  if (PROFILE === 'heap')
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: INTERVAL,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    })
  if (PROFILE === 'cpu') {
    await session.post('Profiler.enable')
    await session.post('Profiler.setSamplingInterval', { interval: 200 })
    await session.post('Profiler.start')
  }
  // Read first: `rollbacks` runs psql, whose session is PostgreSQL CPU the run should not count.
  const batching = h.service.store.batching()
  const rolledBack = rollbacks()
  const before = processCpu([process.pid], dataDir)!
  const switchesBefore = contextSwitches(process.pid)
  await sign(h, requests)
  const after = processCpu([process.pid], dataDir)!
  const switches = (contextSwitches(process.pid) - switchesBefore) / requests.length
  // How the run's work went to the database: PostgreSQL's lock groups (the limited side), the
  // shared reads ahead and inserts (both), transactions rolled back.
  const delta = (key: 'commits' | 'lookups' | 'inserts') => {
    const now = h.service.store.batching()[key]
    const then = batching[key]
    return now && then ? `${now.batches - then.batches} for ${now.items - then.items}` : '-'
  }
  console.log(
    `  run: lock groups ${delta('commits')} signings; reads ahead ${delta('lookups')}; inserts ${delta('inserts')}; rolled back ${rollbacks() - rolledBack}`,
  )
  const byFunction = new Map<string, number>()
  /** cpu: each function's own time a signing (the top of the stack's sample). */
  const selfOf = new Map<string, number>()
  let total = 0
  const nameOf = ({ functionName, url, lineNumber }: Node['callFrame']) =>
    `${functionName || '(anonymous)'} ${url.split('/').slice(-1)[0]}:${lineNumber + 1}`
  if (PROFILE === 'heap') {
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
      profile: { head: Node }
    }
    const walk = (node: Node) => {
      const name = nameOf(node.callFrame)
      byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize / requests.length)
      total += node.selfSize
      for (const child of node.children) walk(child)
    }
    walk(profile.head)
  }
  if (PROFILE === 'cpu') {
    // Each sample's time (µs) goes to every function on its stack, once each (inclusive time).
    const { profile } = (await session.post('Profiler.stop')) as unknown as {
      profile: {
        nodes: { id: number; callFrame: Node['callFrame'] }[]
        samples: number[]
        timeDeltas: number[]
      }
    }
    const byId = new Map(profile.nodes.map((node) => [node.id, node]))
    const parent = new Map<number, number>()
    for (const node of profile.nodes as { id: number; children?: number[] }[])
      for (const child of node.children ?? []) parent.set(child, node.id)
    profile.samples.forEach((id, index) => {
      const micros = profile.timeDeltas[index + 1] ?? 0
      const seen = new Set<string>()
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const name = nameOf(byId.get(at)!.callFrame)
        if (seen.has(name)) continue
        seen.add(name)
        byFunction.set(name, (byFunction.get(name) ?? 0) + micros / requests.length)
      }
      const top = nameOf(byId.get(id)!.callFrame)
      selfOf.set(top, (selfOf.get(top) ?? 0) + micros / requests.length)
      if (!top.startsWith('(idle)')) total += micros
    })
  }
  const per = (key: 'service' | 'main' | 'postgres') => (after[key] - before[key]) / requests.length
  return {
    profiled: total / requests.length,
    switches,
    byFunction,
    selfOf,
    cpu: { service: per('service'), main: per('main'), postgres: per('postgres') },
  }
}

const cluster = await startPostgres()
/** Transactions the cluster rolled back so far. */
const rollbacks = () => Number(cluster.psql(`select sum(xact_rollback) from pg_stat_database`).trim())
try {
  const h = await deploymentOn(cluster, 'allocations', { clock: { now: () => Date.now() } }).open()
  const limited: Account[] = []
  const free: Account[] = []
  for (let n = 0; n < ACCOUNTS; n++) {
    limited.push(await account(h, true))
    free.push(await account(h, false))
  }
  // Warm-up: the code paths compiled, the usage rows as long as a busy limit's.
  await sign(h, await prepare(free, REQUESTS))
  await sign(h, await prepare(limited, REQUESTS))
  const session = new Session()
  session.connect()
  const runs: Record<'off' | 'on', Awaited<ReturnType<typeof measured>>[]> = { off: [], on: [] }
  for (let round = 0; round < ROUNDS; round++)
    for (const side of ['off', 'on', 'on', 'off'] as const)
      runs[side].push(
        await measured(session, h, await prepare(side === 'on' ? limited : free, REQUESTS), cluster.dataDir),
      )
  session.disconnect()
  const cpu = (side: 'off' | 'on', key: 'service' | 'main' | 'postgres') =>
    median(runs[side].map((run) => run.cpu[key])).toFixed(2)
  console.log(
    `sign_transaction on PostgreSQL, ${ACCOUNTS} sub-organizations a side, ${CONCURRENCY} at once, ${ROUNDS} rounds of ${REQUESTS} a run (ABBA):`,
  )
  console.log(
    `  CPU a signing, ms, median of runs (moves with the machine): limited ${cpu('on', 'service')} (main thread ${cpu('on', 'main')}) + PostgreSQL ${cpu('on', 'postgres')}; no limit ${cpu('off', 'service')} (main thread ${cpu('off', 'main')}) + PostgreSQL ${cpu('off', 'postgres')}`,
  )
  console.log(
    `    runs, service + PostgreSQL: ${runs.on.map((run) => (run.cpu.service + run.cpu.postgres).toFixed(2)).join(', ')} / ${runs.off.map((run) => (run.cpu.service + run.cpu.postgres).toFixed(2)).join(', ')}`,
  )
  console.log(
    `  context switches of this process's threads a signing: limited ${median(runs.on.map((run) => run.switches)).toFixed(2)}, no limit ${median(runs.off.map((run) => run.switches)).toFixed(2)}`,
  )
  if (PROFILE !== 'none') printProfiles(runs)
  await h.service.close()
} finally {
  await cluster.dispose()
}
process.exit(0)

/**
 * Bytes (heap) or main-thread µs (cpu) a signing, both sides, and the functions that make the
 * difference (self: in the function itself, not what it calls).
 */
function printProfiles(runs: Record<'off' | 'on', Awaited<ReturnType<typeof measured>>[]>) {
  const heap = PROFILE === 'heap'
  const unit = heap ? 'bytes' : 'µs'
  const shown = (value: number) =>
    heap ? `${(value / 1024).toFixed(1)} kB` : `${(value / 1000).toFixed(3)} ms`
  const totals = {
    off: median(runs.off.map((run) => run.profiled)),
    on: median(runs.on.map((run) => run.profiled)),
  }
  console.log(
    `  ${heap ? "allocated on the service's thread" : 'main thread busy in JavaScript, GC and native code (sampled)'} a signing (median of runs): limited ${shown(totals.on)}, no limit ${shown(totals.off)} (${(totals.on / totals.off).toFixed(2)}×; runs: ${runs.on.map((run) => shown(run.profiled)).join(', ')} / ${runs.off.map((run) => shown(run.profiled)).join(', ')})`,
  )
  // Where the difference is: each function's bytes a signing, the median over the side's runs.
  const names = new Set(
    Object.values(runs).flatMap((side) => side.flatMap((run) => [...run.byFunction.keys()])),
  )
  const of = (side: 'off' | 'on', name: string) =>
    median(runs[side].map((run) => run.byFunction.get(name) ?? 0))
  const rows = [...names]
    .filter((name) => name.includes(flags.match))
    .map((name) => ({ name, on: of('on', name), off: of('off', name) }))
  rows.sort((a, b) => b.on - b.off - (a.on - a.off))
  console.log(
    `  the functions that ${heap ? 'allocate' : 'take'} more a signing with a limit (${heap ? 'self' : 'inclusive'}, ${unit} a signing: limited / none):`,
  )
  for (const row of rows.slice(0, Number(flags.top)))
    console.log(
      `    +${(row.on - row.off).toFixed(0).padStart(6)}  ${row.on.toFixed(0).padStart(6)} / ${row.off.toFixed(0).padStart(6)}  ${row.name}`,
    )
  console.log(
    `  and those that ${heap ? 'allocate' : 'take'} less (the path an unlimited signing takes instead):`,
  )
  for (const row of rows.slice(-Math.ceil(Number(flags.top) / 2)).reverse())
    console.log(
      `    ${(row.on - row.off).toFixed(0).padStart(7)}  ${row.on.toFixed(0).padStart(6)} / ${row.off.toFixed(0).padStart(6)}  ${row.name}`,
    )
  if (heap) return
  // The same by each function's own time (what it runs itself, not what it calls).
  const selfNames = new Set(
    Object.values(runs).flatMap((side) => side.flatMap((run) => [...run.selfOf.keys()])),
  )
  const selfIn = (side: 'off' | 'on', name: string) =>
    median(runs[side].map((run) => run.selfOf.get(name) ?? 0))
  const selfRows = [...selfNames]
    .map((name) => ({ name, on: selfIn('on', name), off: selfIn('off', name) }))
    .sort((a, b) => b.on - b.off - (a.on - a.off))
  console.log('  by their own time (self, µs a signing: limited / none):')
  for (const row of selfRows.slice(0, Number(flags.top)))
    console.log(
      `    +${(row.on - row.off).toFixed(0).padStart(6)}  ${row.on.toFixed(0).padStart(6)} / ${row.off.toFixed(0).padStart(6)}  ${row.name}`,
    )
}
