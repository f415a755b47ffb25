/**
 * The service on its databases, over loopback HTTP against `latchkey-service dev`
 * processes: raw library signing rate; `sign_raw_payloads` and `create_wallet` on SQLite
 * (`--data-dir`; and in memory, with no file, to tell the storage's cost apart), on PostgreSQL with one service process and with two (requests round-robin
 * between them); throughput and p50/p99 with 200 concurrent clients; in memory again with metrics
 * (an admin listener) and JSON request logs on, against the same with both off, to show what
 * observing the service costs; in memory again with 3 webhook endpoints (loopback receivers in this
 * process) subscribed to every event, against the same without, to show what signed webhooks cost
 * the request path (delivery runs from the job queue, never in a request); on PostgreSQL with one
 * process, `sign_transaction` under spending limits against none, in turn, for one hot account and
 * for many accounts each under its own limit (`limits-pg`, issue 37). Prints figures side by side;
 * asserts nothing about speed. Starts and removes its own PostgreSQL (scripts/postgres.mjs).
 *
 * Run: npm run bench:service   (or npx tsx bench/service.ts [--requests 6000] [--clients 200]
 *   [--only memory,observed,webhooks,sqlite,postgres1,postgres2,limits-pg] [--workloads sign,wallets] [--profile DIR] [--statements]
 *   [--node-args "--flag …"] [--warm-up 10000] [--rounds N] [--shapes hot,many] [--paced 0.3,0.6,0.8] [--small-clients 20])
 *
 * Latency (issue 42): after the closed-loop runs, paced (open-loop) signing at each `--paced` share
 * of the raw rate, with the service's own stage timings (`GET /dev/timings`: reading, authentication,
 * admission, the waits for a shared statement or a commit group, the database, the crypto job,
 * rendering) printed per stage; a closed loop of `--small-clients` beside the 200-client one; each
 * round's paced p50/p99 with their medians; the bench client's own CPU. The client is this process:
 * the services are child processes, and requests are stamped before the clock starts.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ACTIVITIES, type AccountSpec, type ActivityPath, WEBHOOK_EVENT_TYPES } from '@latchkey/protocol'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { hexToBytes } from '@noble/hashes/utils.js'
import { signApiKeyStamp, signRawPayload } from '../packages/service/src/kernel/crypto/index.ts'
import { unsignedTransfer } from '../packages/service/src/testing/unsignedTransfer.ts'
import { startService } from '../packages/service/test/support/serviceProcess.ts'
import { type PostgresCluster, startPostgres } from '../scripts/postgres.mjs'
import { Connection, type Reply, serializePost } from './loopbackClient.ts'
import { median, printTable } from './printTable.ts'
import { processCpu } from './processCpu.ts'

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '6000' },
    clients: { type: 'string', default: '200' },
    /** Comma-separated subset of: memory, observed, webhooks, sqlite, postgres1, postgres2, limits-pg (default: all). */
    only: { type: 'string' },
    /** Comma-separated subset of: sign, wallets (default: both). */
    workloads: { type: 'string', default: 'sign,wallets' },
    /**
     * Runs the in-memory column with metrics and logs off, then on, this many times in turn, and
     * prints the cost of each pair and their median: on a machine whose speed drifts (a shared
     * VM), one pair can differ by more than the cost being measured. Likewise SQLite and
     * PostgreSQL (1 process) in turn, with the raw signing rate measured again before each round:
     * each round's PostgreSQL / SQLite and PostgreSQL / raw, and their medians.
     */
    rounds: { type: 'string', default: '1' },
    /** Write a V8 CPU profile of each service process into this directory. */
    profile: { type: 'string' },
    /**
     * `limits-pg`: PostgreSQL's statements of each of the last round's four runs, the costliest
     * first (`pg_stat_statements`, loaded in the bench's cluster for this): calls, execution and
     * planning ms in all, rows. Lock statements' time is mostly waiting for the lock.
     */
    statements: { type: 'boolean', default: false },
    /** `limits-pg`: comma-separated subset of its shapes, hot and many (default: both). */
    shapes: { type: 'string', default: 'hot,many' },
    /**
     * Node or V8 options for the service processes, space-separated (what `NODE_OPTIONS` would give
     * a deployment), e.g. `--node-args=--max-semi-space-size=32`.
     */
    'node-args': { type: 'string' },
    /**
     * After the closed-loop signing run, a paced one: the same clients send signings at this share
     * of the raw signing rate, on a schedule that does not wait for answers (open loop), and the
     * latency of each is counted from when it was due. 0 skips it.
     */
    paced: { type: 'string', default: '0.3,0.6,0.8' },
    /**
     * Signing requests sent before each configuration's timed runs (a tenth as many wallets). V8 is
     * still compiling the service's code with TurboFan after 2,000 (issue 42: 0.23 ms of CPU a
     * signing in the timed run, 0.07 after 10,000), so the timed runs start from 10,000, closer to
     * a service that has run for a while.
     */
    'warm-up': { type: 'string', default: '10000' },
    /** A closed-loop signing run with this many clients too (an app's usual concurrency); 0 skips it. */
    'small-clients': { type: 'string', default: '20' },
  },
})
const LOAD_AT_START = loadavg()[0]!
const ONLY = flags.only ? new Set(flags.only.split(',')) : undefined
const wanted = (name: string) => !ONLY || ONLY.has(name)
const REQUESTS = Number(flags.requests)
/** Signing requests sent before each configuration's timed runs (a tenth as many wallets). */
const WARM_UP = Number(flags['warm-up'])
const CLIENTS = Number(flags.clients)
const ROUNDS = Math.max(1, Number(flags.rounds))
/** The shares of the raw signing rate the paced runs offer, in order (`--paced`). */
const PACED = flags.paced
  .split(',')
  .map(Number)
  .filter((share) => share > 0)
const SMALL_CLIENTS = Number(flags['small-clients'])
/** The `limits-pg` shapes measured (`--shapes`). */
const SHAPES_WANTED = (['hot', 'many'] as const).filter((shape) => flags.shapes.split(',').includes(shape))

const ETH: AccountSpec = {
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/60'/0'/0/0",
  addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
}
const HEALTH = Buffer.from('GET /health HTTP/1.1\r\nHost: bench\r\n\r\n')
const payloadOf = (i: number) => `0x${i.toString(16).padStart(64, '0')}`

interface Instance {
  baseUrl: string
  organizationId: string
  apiPublicKey: string
  apiPrivateKey: string
  /** Its process id (CPU per request, from /proc). */
  pid?: number
  /** Its admin listener (PostgreSQL columns: the batching counters on /metrics). */
  adminUrl?: string
  /** What the process wrote to stderr so far. */
  stderr(): string
  /** How it ended, once it did (a crash during a run: its signal or code). */
  exit?: { code: number | null; signal: NodeJS.Signals | null }
  close(): Promise<void>
}

/** One request over a fresh connection (set-up and warm-up, not timed). */
async function post(request: { url: string; bytes: Buffer }): Promise<Reply> {
  const connection = new Connection(request.url)
  try {
    return await connection.send(request.bytes)
  } finally {
    connection.close()
  }
}

let tick = Date.now()
/** A stamped activity, built before timing starts (stamping is the client's cost). */
function prepare(instance: Instance, path: ActivityPath, parameters: object) {
  const body = JSON.stringify({
    type: ACTIVITIES[path].type,
    timestampMs: String(Math.max(Date.now(), ++tick)),
    organizationId: instance.organizationId,
    parameters,
  })
  const stamp = signApiKeyStamp(body, {
    scheme: 'SIGNATURE_SCHEME_TK_API_P256',
    privateKey: hexToBytes(instance.apiPrivateKey),
  })
  const url = `${instance.baseUrl}/public/v1/submit/${path}`
  return { url, bytes: serializePost(url, body, stamp) }
}

/** The machine's CPU time so far, from /proc/stat (Linux; undefined elsewhere). */
function cpuTimes(): { idle: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
    return { idle: fields[3]! + (fields[4] ?? 0), total: fields.reduce((sum, n) => sum + n, 0) }
  } catch {
    return undefined
  }
}

/**
 * What the machine's disks wrote so far (MB, from /proc/diskstats: whole disks, not partitions),
 * and the bench's PostgreSQL's checkpoints (pg_stat_bgwriter): read around each paced run, to see
 * whether a slow run had a database's background writes beside it (a fsync waits behind them).
 */
function background(): { diskMB: number; checkpoints?: number } {
  let sectors = 0
  try {
    const disks = new Set(readdirSync('/sys/block').filter((name) => !/^(loop|ram|zram)/.test(name)))
    for (const line of readFileSync('/proc/diskstats', 'utf8').split('\n')) {
      const fields = line.trim().split(/\s+/)
      // major, minor, name, then reads (4 fields), then writes: completed, merged, sectors, ms.
      if (fields.length > 9 && disks.has(fields[2]!)) sectors += Number(fields[9])
    }
  } catch {}
  let checkpoints: number | undefined
  try {
    if (postgres)
      checkpoints = Number(
        postgres.psql('select checkpoints_timed + checkpoints_req from pg_stat_bgwriter').trim(),
      )
  } catch {}
  return { diskMB: (sectors * 512) / 1e6, ...(checkpoints === undefined ? {} : { checkpoints }) }
}

const idleShare = (before: ReturnType<typeof cpuTimes>, after: ReturnType<typeof cpuTimes>) =>
  before && after && after.total > before.total
    ? (after.idle - before.idle) / (after.total - before.total)
    : undefined

interface Run {
  /** Share of the machine's CPU time left idle while the run went on (all cores, all processes). */
  idle?: number | undefined
  /**
   * CPU time per request during the run, ms: the service processes', their main threads' (part of
   * the former), PostgreSQL's (/proc).
   */
  cpuPerRequest?: { service: number; main: number; postgres: number } | undefined
  /** PostgreSQL transactions rolled back during the run (serialization conflicts rerun, failures). */
  rolledBack?: number
  /** Statements PostgreSQL ran for one more such request, sent alone after the run (its log). */
  statements?: number
  /** Requests per statement during the run: reads ahead, inserts (the service's batching counters). */
  perStatement?: { lookups: number; inserts: number }
  /** Transactions per commit during the run (SQLite's group commit, the same counters). */
  perCommit?: number
  /** The bench client's own CPU (this process) during the run. */
  client?: ClientCpu
  perSecond: number
  p50: number
  p99: number
  failed: number
  firstFailure?: string
}

/** This process's CPU during a run: ms per request and the share of one core it kept busy. */
interface ClientCpu {
  perRequest: number
  ofACore: number
}
function clientCpu(before: NodeJS.CpuUsage, seconds: number, requests: number): ClientCpu {
  const used = process.cpuUsage(before)
  const ms = (used.user + used.system) / 1000
  return { perRequest: requests > 0 ? ms / requests : Number.NaN, ofACore: ms / 1000 / seconds }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN

/**
 * `REQUESTS` prepared requests from `CLIENTS` concurrent clients. Clients are dealt round-robin to
 * `instances` and each keeps to its own (as a load balancer keeps a kept-alive connection on one
 * backend): a connection left idle while its client waited on another process would be closed by
 * the server's keep-alive timeout and fail the next request with "socket hang up".
 */
async function load(
  instances: Instance[],
  make: (instance: Instance, i: number) => ReturnType<typeof prepare>,
  requests = REQUESTS,
  clients = CLIENTS,
) {
  const queues = instances.map((instance, n) =>
    Array.from({ length: Math.ceil((requests - n) / instances.length) }, (_, k) =>
      make(instance, k * instances.length + n),
    ),
  )
  // One kept-alive connection per client, to the instance it keeps to, opened before the clock.
  const connections = Array.from(
    { length: clients },
    (_, client) => new Connection(instances[client % instances.length]!.baseUrl),
  )
  await Promise.all(connections.map((connection) => connection.send(HEALTH)))
  const latencies: number[] = []
  let failed = 0
  let firstFailure: string | undefined
  const cpuBefore = cpuTimes()
  const pids = instances.flatMap((instance) => (instance.pid ? [instance.pid] : []))
  const processesBefore = processCpu(pids, postgres?.dataDir)
  const clientBefore = process.cpuUsage()
  const start = performance.now()
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      const queue = queues[client % queues.length]!
      for (let request = queue.shift(); request; request = queue.shift()) {
        const begin = performance.now()
        try {
          const reply = await connections[client]!.send(request.bytes)
          if (reply.status !== 200) {
            failed++
            let code = reply.text.slice(0, 80)
            try {
              code = JSON.parse(reply.text).details?.errorCode ?? code
            } catch {}
            firstFailure ??= `${reply.status} ${code}`
            continue
          }
        } catch (error) {
          failed++
          firstFailure ??= (error as Error).message
          // A connection the server closed fails every later send at once: the next request goes
          // on a new one (as a client's pool does), so a reset fails one request, not the rest of
          // the queue (a closed connection once failed 4,755 of 6,000 in a few milliseconds).
          if (connections[client]!.closed) {
            connections[client]!.close()
            connections[client] = new Connection(instances[client % instances.length]!.baseUrl)
          }
          continue
        }
        latencies.push(performance.now() - begin)
      }
    }),
  )
  const seconds = (performance.now() - start) / 1000
  const processesAfter = processCpu(pids, postgres?.dataDir)
  const client = clientCpu(clientBefore, seconds, latencies.length)
  for (const connection of connections) connection.close()
  latencies.sort((a, b) => a - b)
  return {
    client,
    perSecond: latencies.length / seconds,
    idle: idleShare(cpuBefore, cpuTimes()),
    cpuPerRequest:
      processesBefore && processesAfter && latencies.length > 0
        ? {
            service: (processesAfter.service - processesBefore.service) / latencies.length,
            main: (processesAfter.main - processesBefore.main) / latencies.length,
            postgres: (processesAfter.postgres - processesBefore.postgres) / latencies.length,
          }
        : undefined,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    failed,
    ...(firstFailure ? { firstFailure } : {}),
  } satisfies Run
}

/**
 * `requests` prepared requests offered at `perSecond` from `CLIENTS` kept-alive connections, on a
 * schedule fixed in advance (open loop): request i is due at start + i / perSecond whether or not
 * earlier ones were answered, and goes out on the first free connection of its instance. Its
 * latency runs from when it was due, so time spent waiting for a free connection counts (no
 * coordinated omission). A closed loop of 200 clients instead measures 200 / throughput on
 * average (Little's law), whatever the service's own latency is.
 */
async function paced(
  instances: Instance[],
  make: (instance: Instance, i: number) => ReturnType<typeof prepare>,
  perSecond: number,
  requests = REQUESTS,
) {
  const prepared = Array.from({ length: requests }, (_, i) => make(instances[i % instances.length]!, i))
  const free = instances.map((_, n) =>
    Array.from(
      { length: Math.ceil((CLIENTS - n) / instances.length) },
      () => new Connection(instances[n]!.baseUrl),
    ),
  )
  const all = free.flat()
  await Promise.all(all.map((connection) => connection.send(HEALTH)))
  const waiting = instances.map(() => [] as { index: number; due: number }[])
  const latencies: number[] = []
  let failed = 0
  let firstFailure: string | undefined
  let answered = 0
  let done!: () => void
  const finished = new Promise<void>((resolve) => {
    done = resolve
  })
  const start = performance.now() + 20
  const send = (n: number, connection: Connection, job: { index: number; due: number }) => {
    connection
      .send(prepared[job.index]!.bytes)
      .then(
        (reply) => {
          if (reply.status === 200) latencies.push(performance.now() - job.due)
          else {
            failed++
            firstFailure ??= `${reply.status} ${reply.text.slice(0, 80)}`
          }
        },
        (error: Error) => {
          failed++
          firstFailure ??= error.message
        },
      )
      .finally(() => {
        const next = waiting[n]!.shift()
        if (next) send(n, connection, next)
        else free[n]!.push(connection)
        if (++answered === requests) done()
      })
  }
  let next = 0
  const tick = () => {
    const now = performance.now()
    for (; next < requests && start + (next * 1000) / perSecond <= now; next++) {
      const n = next % instances.length
      const job = { index: next, due: start + (next * 1000) / perSecond }
      // The longest idle first, so every connection keeps busy (none idles past keep-alive).
      const connection = free[n]!.shift()
      if (connection) send(n, connection, job)
      else waiting[n]!.push(job)
    }
    if (next < requests) setTimeout(tick, Math.max(0, start + (next * 1000) / perSecond - performance.now()))
  }
  const clientBefore = process.cpuUsage()
  setTimeout(tick, 20)
  await finished
  const seconds = (performance.now() - start) / 1000
  const client = clientCpu(clientBefore, seconds, latencies.length)
  for (const connection of all) connection.close()
  latencies.sort((a, b) => a - b)
  return {
    client,
    offered: perSecond,
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    failed,
    ...(firstFailure ? { firstFailure } : {}),
  }
}

/** The service's stage timings (`/dev/timings`): each stage's count and p50/p99/max in ms. */
type Stages = Record<string, { count: number; p50: number; p99: number; max: number; total: number }>
/** Empties the stage timings of `instances` (before the run they are read after). */
async function resetTimings(instances: Instance[]): Promise<void> {
  for (const instance of instances) {
    const reply = await fetch(`${instance.baseUrl}/dev/timings`, { method: 'DELETE' })
    if (reply.status !== 204) throw new Error(`DELETE /dev/timings: ${reply.status}`)
  }
}
/** The stage timings of `instance` since the last reset. */
async function readTimings(instance: Instance): Promise<Stages> {
  const reply = await fetch(`${instance.baseUrl}/dev/timings`)
  if (reply.status !== 200) throw new Error(`GET /dev/timings: ${reply.status}`)
  return (await reply.json()) as Stages
}

async function createSigner(instance: Instance): Promise<string> {
  const reply = await post(
    prepare(instance, 'create_wallet', { walletName: 'bench signer', accounts: [ETH] }),
  )
  if (reply.status !== 200) throw new Error(`create_wallet: ${reply.status} ${reply.text}`)
  return JSON.parse(reply.text).activity.result.createWalletResult.addresses[0]
}

/** Both workloads against `instances` (one data store). */
/** PostgreSQL's statement log, switched on around one request to count what it ran. */
let statementLog: string[] | undefined
async function statementsOf(send: () => Promise<Reply>): Promise<number> {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300))
  postgres!.psql("ALTER SYSTEM SET log_statement = 'all'")
  postgres!.psql('SELECT pg_reload_conf()')
  await settle()
  statementLog = []
  const reply = await send()
  await settle()
  const lines = statementLog.filter((line) => /LOG: +(statement|execute [^:]*):/.test(line))
  statementLog = undefined
  postgres!.psql('ALTER SYSTEM RESET log_statement')
  postgres!.psql('SELECT pg_reload_conf()')
  if (reply.status !== 200) throw new Error(`counting statements: ${reply.status} ${reply.text}`)
  return lines.length
}

/** The batching counters of `instances`' /metrics, summed (`lookups batches`, `inserts items`, …). */
async function batching(instances: Instance[]): Promise<Record<string, number>> {
  const sums: Record<string, number> = {}
  for (const instance of instances) {
    if (!instance.adminUrl) continue
    // A fresh connection each time (fetch's kept-alive one can meet the server's keep-alive
    // timeout after a run and fail with ECONNRESET).
    const { host } = new URL(instance.adminUrl)
    const request = Buffer.from(`GET /metrics HTTP/1.1\r\nHost: ${host}\r\n\r\n`)
    const { text } = await post({ url: instance.adminUrl, bytes: request })
    for (const [, name, kind, value] of text.matchAll(
      /^latchkey_store_batch(es|ed_requests)_total\{kind="(\w+)"\} (\d+)$/gm,
    )) {
      const key = `${kind} ${name === 'es' ? 'batches' : 'items'}`
      sums[key] = (sums[key] ?? 0) + Number(value)
    }
  }
  return sums
}

async function measure(instances: Instance[], rollbacks?: () => number) {
  // On PostgreSQL: the transactions the run rolled back, the statements of one more request and
  // requests per statement; on SQLite: transactions per commit.
  const counted = async (
    run: Promise<Run>,
    one: () => ReturnType<typeof prepare>,
    before = rollbacks?.(),
  ) => {
    const batchedBefore = await batching(instances)
    const result = await run
    const batchedAfter = await batching(instances)
    const per = (kind: 'lookups' | 'inserts' | 'commits') =>
      (batchedAfter[`${kind} items`]! - batchedBefore[`${kind} items`]!) /
      (batchedAfter[`${kind} batches`]! - batchedBefore[`${kind} batches`]!)
    if (before === undefined)
      return batchedAfter['commits batches'] === undefined ? result : { ...result, perCommit: per('commits') }
    const rolledBack = rollbacks!() - before
    return {
      ...result,
      rolledBack,
      statements: await statementsOf(() => post(one())),
      perStatement: { lookups: per('lookups'), inserts: per('inserts') },
    }
  }
  const signWith = await createSigner(instances[0]!)
  const signParams = (i: number) => ({
    signWith,
    payloads: [payloadOf(i)],
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_KECCAK256',
  })
  // Warm-up, not counted: the same load for a while first, so the figures are the steady state
  // (JIT-compiled code, full connection pools, prepared statements, caches), not the first second.
  await load(instances, (instance, i) => prepare(instance, 'sign_raw_payloads', signParams(1e9 + i)), WARM_UP)
  await load(
    instances,
    (instance, i) => prepare(instance, 'create_wallet', { walletName: `warm-up ${i}`, accounts: [ETH] }),
    WARM_UP / 10,
  )
  const workloads = new Set(flags.workloads.split(','))
  const skipped: Run = { perSecond: Number.NaN, p50: Number.NaN, p99: Number.NaN, failed: 0 }
  const sign = workloads.has('sign')
    ? await counted(
        load(instances, (instance, i) => prepare(instance, 'sign_raw_payloads', signParams(i))),
        () => prepare(instances[0]!, 'sign_raw_payloads', signParams(2e9)),
      )
    : skipped
  const wallets = workloads.has('wallets')
    ? await counted(
        load(instances, (instance, i) =>
          prepare(instance, 'create_wallet', { walletName: `bench ${i}`, accounts: [ETH] }),
        ),
        () => prepare(instances[0]!, 'create_wallet', { walletName: 'bench counted', accounts: [ETH] }),
      )
    : skipped
  const signSmall =
    workloads.has('sign') && SMALL_CLIENTS > 0
      ? await load(
          instances,
          (instance, i) => prepare(instance, 'sign_raw_payloads', signParams(2.5e9 + i)),
          REQUESTS,
          SMALL_CLIENTS,
        )
      : undefined
  // Each share in turn, after a second's quiet (the closed loop's backlog gone), with the service's
  // stage timings counted over that run alone (the first instance's).
  const signPaced: (Awaited<ReturnType<typeof paced>> & {
    share: number
    stages?: Stages
    /** Beside the run: MB the disks wrote, PostgreSQL's checkpoints. */
    beside: { diskMB: number; checkpoints?: number }
  })[] = []
  if (workloads.has('sign'))
    for (const [n, share] of PACED.entries()) {
      await new Promise((resolve) => setTimeout(resolve, 1000))
      await resetTimings(instances)
      const before = background()
      const run = await paced(
        instances,
        (instance, i) => prepare(instance, 'sign_raw_payloads', signParams(3e9 + n * 1e7 + i)),
        share * rawPerSecond,
      )
      const after = background()
      signPaced.push({
        share,
        ...run,
        stages: await readTimings(instances[0]!),
        beside: {
          diskMB: after.diskMB - before.diskMB,
          ...(after.checkpoints === undefined || before.checkpoints === undefined
            ? {}
            : { checkpoints: after.checkpoints - before.checkpoints }),
        },
      })
    }
  return { sign, wallets, signSmall, signPaced }
}

/** `sign_transaction` of 1 wei from `from`, nonce `i` (distinct bodies: no replays). */
function signTransaction(instance: Instance, from: string, i: number) {
  return prepare(instance, 'sign_transaction', {
    signWith: from,
    type: 'TRANSACTION_TYPE_ETHEREUM',
    unsignedTransaction: unsignedTransfer({ value: 1n, nonce: i }),
  })
}

/** The two shapes of `limits-pg`, each measured without and with limits in each round. */
type LimitShape = 'hot' | 'many'
/** The costliest statements PostgreSQL ran since the last reset, one line each (`--statements`). */
function topStatements(cluster: PostgresCluster, count = 8): string {
  return cluster.psql(
    `select calls || ' calls, ' || round(total_exec_time::numeric, 1) || ' ms, planning ' || round(total_plan_time::numeric, 1) || ' ms, ' || rows || ' rows: ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 120) from pg_stat_statements where query not like '%pg_stat_statements%' order by total_exec_time + total_plan_time desc limit ${count}`,
  )
}

type LimitRun = Run & { stages?: Stages; costliest?: string }
/**
 * One round of a shape: without, with, with, without (ABBA), so that each side runs as often first
 * as second in a pair of runs, and a drift over the round falls on both alike.
 */
type LimitRound = { off: [LimitRun, LimitRun]; on: [LimitRun, LimitRun] }
/** Each round's `sign_transaction` runs without and with a spending limit, per shape (`limits-pg`). */
const limitRounds: Record<LimitShape, LimitRound[]> = {
  hot: [],
  many: [],
}
/** Accounts of the many-accounts shape (each in a sub-organization of its own). */
const MANY_ACCOUNTS = 50

/**
 * A sub-organization (an app's user) whose root user holds the bench's API key, with one Ethereum
 * account; under a daily limit far above what the run spends when `limited` (every signature
 * reserves under it, none is refused).
 */
async function benchAccount(instance: Instance, name: string, limited: boolean) {
  const reply = await post(
    prepare(instance, 'create_sub_organization', {
      subOrganizationName: name,
      rootUsers: [
        {
          userName: name,
          apiKeys: [
            { apiKeyName: 'bench', publicKey: instance.apiPublicKey, curveType: 'API_KEY_CURVE_P256' },
          ],
          authenticators: [],
          oauthProviders: [],
        },
      ],
      rootQuorumThreshold: 1,
      wallet: { walletName: name, accounts: [ETH] },
    }),
  )
  if (reply.status !== 200) throw new Error(`create_sub_organization: ${reply.status} ${reply.text}`)
  const { subOrganizationId, wallet } = JSON.parse(reply.text).activity.result.createSubOrganizationResultV7
  const account = {
    instance: { ...instance, organizationId: subOrganizationId as string },
    from: wallet.addresses[0] as string,
  }
  if (limited) {
    const limit = await post(
      prepare(account.instance, 'latchkey_create_spending_limit', {
        spendingLimitName: 'bench',
        scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: account.from },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
        amount: String(10n ** 30n),
      }),
    )
    if (limit.status !== 200) throw new Error(`latchkey_create_spending_limit: ${limit.status} ${limit.text}`)
  }
  return account
}

/**
 * Two shapes on one PostgreSQL process, each without limits and with them, in turn, `ROUNDS` times
 * (drift on a shared machine falls on both alike). Every account is a sub-organization of its own,
 * as each of an app's users is: an organization with a limit runs its signatures one at a time, so
 * the accounts without a limit are in organizations with none.
 * - `hot`: one account signs at `--clients`-way concurrency, under one limit or none. Every
 *   signature rewrites the limit's one usage row: one at a time by nature.
 * - `many`: `MANY_ACCOUNTS` accounts, request i from account i mod `MANY_ACCOUNTS`, each under a
 *   limit of its own or under none.
 */
type Account = Awaited<ReturnType<typeof benchAccount>>
async function measureLimits(instances: Instance[]) {
  const [instance] = instances as [Instance]
  const accounts = async (count: number, limited: boolean) => {
    const made: Account[] = []
    for (let n = 0; n < count; n++)
      made.push(await benchAccount(instance, `${limited ? 'limited' : 'free'} ${n}`, limited))
    return made
  }
  const sizes = { hot: 1, many: MANY_ACCOUNTS }
  const shapes: Partial<Record<LimitShape, { off: Account[]; on: Account[] }>> = {}
  for (const shape of SHAPES_WANTED)
    shapes[shape] = { off: await accounts(sizes[shape], false), on: await accounts(sizes[shape], true) }
  let nonce = 0
  const run = (signers: Account[], requests = REQUESTS) => {
    const first = nonce
    nonce += requests
    return load(
      instances,
      (_, i) => {
        const signer = signers[i % signers.length]!
        return signTransaction(signer.instance, signer.from, first + i)
      },
      requests,
    )
  }
  // Warm-up as in the other columns, but never longer than a timed run (one hot limit is slow).
  for (const shape of Object.values(shapes)) {
    await run(shape.off, Math.min(WARM_UP / 2, REQUESTS))
    await run(shape.on, Math.min(WARM_UP / 2, REQUESTS))
  }
  const timed = async (signers: Account[]) => {
    await resetTimings(instances)
    const result = await run(signers)
    return { ...result, stages: await readTimings(instance) }
  }
  // What PostgreSQL ran for each run of the last round (`--statements`).
  const statements = async (run: () => Promise<LimitRun>, last: boolean): Promise<LimitRun> => {
    if (!flags.statements || !last) return run()
    postgres!.psql('select pg_stat_statements_reset()')
    const result = await run()
    return { ...result, costliest: topStatements(postgres!) }
  }
  if (flags.statements) postgres!.psql('create extension if not exists pg_stat_statements')
  // Without and with in turn, ABBA: an A/A run of this bench (the same side in both places, 4
  // rounds) found the second run of a pair 10% faster in 3 rounds of 4 (0.90, 1.15, 1.11, 1.09),
  // and the limited run always came second.
  for (let round = 0; round < ROUNDS; round++)
    for (const name of SHAPES_WANTED) {
      const last = round === ROUNDS - 1
      const shape = shapes[name]!
      const off = await timed(shape.off)
      const on = await timed(shape.on)
      const onAgain = await statements(() => timed(shape.on), last)
      const offAgain = await statements(() => timed(shape.off), last)
      limitRounds[name].push({ off: [off, offAgain], on: [on, onAgain] })
    }
}

const temp = mkdtempSync(join(tmpdir(), 'latchkey-bench-'))
type Column = { name: string; result?: Awaited<ReturnType<typeof measure>>; error?: string; logged?: string }
const memory: Column = { name: 'SQLite in memory' }
const observed: Column = { name: 'in memory, metrics + JSON logs' }
const webhooks: Column = { name: 'in memory, 3 webhook endpoints' }
const sqlite: Column = { name: 'SQLite, 1 process' }
const postgres1: Column = { name: 'PostgreSQL, 1 process' }
const postgres2: Column = { name: 'PostgreSQL, 2 processes' }
/** Not a column of the table: its own line under it (`limits-pg`). */
const limitsColumn: Column = { name: 'PostgreSQL, 1 process, sign_transaction with / without limits' }
const columns = [memory, observed, webhooks, sqlite, postgres1, postgres2].filter((_, n) =>
  wanted(['memory', 'observed', 'webhooks', 'sqlite', 'postgres1', 'postgres2'][n]!),
)

/**
 * Loopback receivers in this process, one per endpoint: each answers 204 at once and counts what it
 * got (the signature is checked by the tests, not here: this measures the service's side).
 */
const receivers = { delivered: 0, servers: [] as import('node:http').Server[] }
async function subscribeEverything(instance: Instance): Promise<void> {
  const { createServer } = await import('node:http')
  for (let n = 0; n < 3; n++) {
    const server = createServer((request, response) => {
      request.resume()
      request.on('end', () => {
        receivers.delivered++
        response.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    receivers.servers.push(server)
    const { port } = server.address() as import('node:net').AddressInfo
    const reply = await post(
      prepare(instance, 'create_webhook_endpoint', {
        url: `http://127.0.0.1:${port}/hook${n}`,
        name: `bench ${n}`,
        subscriptions: WEBHOOK_EVENT_TYPES.map((eventType) => ({ eventType })),
      }),
    )
    if (reply.status !== 200) throw new Error(`create_webhook_endpoint: ${reply.status} ${reply.text}`)
  }
}
/**
 * Deliveries received while the webhooks column's timed runs went on, and after them until none
 * came for 3 s (at least 12 s: a busy service holds them up to 10 s); each round's time from the
 * runs' end to the last delivery, and the service's CPU meanwhile per delivery.
 */
const webhookFigures = { duringRuns: 0, after: 0, drainMs: [] as number[], cpuPerDelivery: [] as number[] }
/** Metrics and request logs off: what every column but `observed` measures. */
const QUIET = ['--log-level', 'silent']
/** Metrics kept for an admin listener, one JSON line per request on stderr (which the bench reads). */
const OBSERVED = ['--admin-port', '0', '--log-format', 'json', '--log-level', 'info']

async function withInstances(
  count: number,
  args: (n: number) => string[],
  column: Column,
  rollbacks?: () => number,
  setUp?: (instance: Instance) => Promise<void>,
  /** What to measure instead of both workloads (its figures kept by itself). */
  own?: (instances: Instance[]) => Promise<void>,
) {
  const instances: Instance[] = []
  try {
    // One after the other: the first migrates and bootstraps, the others read.
    for (let n = 0; n < count; n++) {
      const service = await startService({
        args: [...(column === observed ? OBSERVED : QUIET), ...args(n)],
        nodeArgs: [
          ...(flags['node-args']?.split(' ').filter(Boolean) ?? []),
          ...(flags.profile ? ['--cpu-prof', `--cpu-prof-dir=${flags.profile}`] : []),
        ],
      })
      const instance: Instance = {
        ...service.info,
        pid: service.pid,
        stderr: service.stderr,
        close: async () => void (await service.stop()),
      }
      void service.exited.then((exit) => {
        instance.exit = exit
      })
      instances.push(instance)
    }
    if (setUp) await setUp(instances[0]!)
    const deliveredBefore = receivers.delivered
    if (own) await own(instances)
    else column.result = await measure(instances, rollbacks)
    if (setUp) {
      // Every delivery is sent before the service stops, so none of it runs into the next column.
      webhookFigures.duringRuns += receivers.delivered - deliveredBefore
      const ended = Date.now()
      const cpuBefore = processCpu(
        instances.flatMap((instance) => (instance.pid ? [instance.pid] : [])),
        postgres?.dataDir,
      )
      const settled = receivers.delivered
      let last = { count: settled, at: ended }
      while (Date.now() - ended < 180_000) {
        await new Promise((resolve) => setTimeout(resolve, 250))
        if (receivers.delivered !== last.count) last = { count: receivers.delivered, at: Date.now() }
        else if (Date.now() - last.at >= 3000 && Date.now() - ended >= 12_000) break
      }
      const cpuAfter = processCpu(
        instances.flatMap((instance) => (instance.pid ? [instance.pid] : [])),
        postgres?.dataDir,
      )
      webhookFigures.after += last.count - settled
      webhookFigures.drainMs.push(last.at - ended)
      if (cpuBefore && cpuAfter && last.count > settled)
        webhookFigures.cpuPerDelivery.push((cpuAfter.service - cpuBefore.service) / (last.count - settled))
    }
    // The first error line a process logged, to name what the failed requests were.
    const logged = instances.flatMap((instance) =>
      instance
        .stderr()
        .split('\n')
        .filter((line) => /error/i.test(line) && !line.includes('"level":"info"')),
    )
    if (logged[0]) column.logged = `${logged.length} error lines, first: ${logged[0].slice(0, 160)}`
    // Failed requests: whether a process died during the runs (its exit and the tail of its stderr).
    const runs = column.result ? [column.result.sign, column.result.wallets, column.result.signSmall] : []
    if (runs.some((run) => run?.failed))
      for (const instance of instances)
        column.logged =
          `${column.logged ?? ''}${column.logged ? '; ' : ''}` +
          (instance.exit
            ? `the service exited during the runs (${instance.exit.signal ?? instance.exit.code}), stderr's tail: ${instance.stderr().slice(-600)}`
            : `the service was still running after the failures (no crash), stderr's tail: ${instance.stderr().slice(-300) || '(empty)'}`)
  } catch (error) {
    column.error = (error as Error).message.split('\n').slice(0, 3).join(' ')
  } finally {
    for (const instance of instances) await instance.close()
  }
}

// The raw rate, issue 42's yardstick of the machine's speed: noble's secp256k1 signing of a keccak
// digest in this thread (warm-up, then 2 s of signing), what `signRawPayload` did when the issue set
// its targets as shares of it. The service has signed with libsecp256k1 since
// (kernel/crypto/secp256k1Sign.ts, about four times as fast): its own rate in this thread is printed
// beside, and every ratio stays comparable with the earlier figures in bench/README.md.
const rawKey = hexToBytes('11'.repeat(32))
const rawSign = (i: number) =>
  secp256k1.sign(keccak_256(hexToBytes(payloadOf(i).slice(2))), rawKey, {
    prehash: false,
    lowS: true,
    format: 'recovered',
  })
const serviceSign = (i: number) =>
  signRawPayload({
    curve: 'CURVE_SECP256K1',
    privateKey: rawKey,
    payload: payloadOf(i),
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_KECCAK256',
  })
for (let i = 0; i < 500; i++) rawSign(i)
for (let i = 0; i < 500; i++) serviceSign(i)
function measureRaw(sign: (i: number) => unknown = rawSign): number {
  let count = 0
  const start = performance.now()
  while (performance.now() - start < 2000) sign(count++)
  return (count * 1000) / (performance.now() - start)
}
const serviceSignerPerSecond = measureRaw(serviceSign)
let rawPerSecond = measureRaw()
/** Each round's raw rate and durable columns (`--rounds`), for the medians under the table. */
const durableRounds: {
  raw: number
  rawAfter?: number
  sqlite?: Column['result']
  postgres?: Column['result']
}[] = []

/** Each round's in-memory runs with metrics and logs off and on (the table shows the last round). */
const pairs: { off: NonNullable<Column['result']>; on: NonNullable<Column['result']> }[] = []
/** Each round's in-memory runs without and with 3 webhook endpoints on every event. */
const webhookPairs: { off: NonNullable<Column['result']>; on: NonNullable<Column['result']> }[] = []
let postgres: PostgresCluster | undefined
try {
  // No --data-dir: the same queries with no file and no fsync, to tell the storage's cost apart.
  for (let round = 0; round < ROUNDS; round++) {
    if (wanted('memory')) await withInstances(1, () => [], memory)
    if (wanted('observed')) await withInstances(1, () => [], observed)
    if (memory.result && observed.result) pairs.push({ off: memory.result, on: observed.result })
    if (wanted('webhooks')) await withInstances(1, () => [], webhooks, undefined, subscribeEverything)
    if (memory.result && webhooks.result) webhookPairs.push({ off: memory.result, on: webhooks.result })
  }
  for (const server of receivers.servers) server.close()
  if (wanted('postgres1') || wanted('postgres2') || wanted('limits-pg'))
    try {
      postgres = await startPostgres({
        log: (line: string) => statementLog?.push(line),
        ...(flags.statements ? { preload: ['pg_stat_statements'] } : {}),
      })
    } catch (error) {
      postgres1.error =
        postgres2.error = `PostgreSQL did not start: ${(error as Error).message.split('\n')[0]}`
    }
  const keyFile = join(temp, 'master.key')
  const rollbacks = (database: string) => () =>
    Number(postgres!.psql(`select xact_rollback from pg_stat_database where datname = '${database}'`).trim())
  // SQLite and PostgreSQL in one process, in turn, `--rounds` times (PostgreSQL where it started).
  const pg1 = wanted('postgres1') ? postgres : undefined
  // An admin listener (metrics, no logs) for the batching counters.
  const pgArgs = (url: string) => ['--database-url', url, '--master-key-file', keyFile, '--admin-port', '0']
  for (let round = 0; round < ROUNDS && (wanted('sqlite') || pg1); round++) {
    if (round > 0) rawPerSecond = measureRaw()
    if (wanted('sqlite'))
      await withInstances(1, () => ['--data-dir', join(temp, 'sqlite'), '--admin-port', '0'], sqlite)
    if (pg1)
      await withInstances(
        1,
        () => pgArgs(pg1.url),
        postgres1,
        rollbacks(pg1.url.replace(/^.*\//, '').replace(/\?.*$/, '')),
      )
    durableRounds.push({
      raw: rawPerSecond,
      // Measured again once the round is over: how far the machine's speed drifted during it.
      rawAfter: measureRaw(),
      sqlite: sqlite.result,
      postgres: postgres1.result,
    })
  }
  if (postgres) {
    // A fresh database for the two processes, so both start from the same (empty) state.
    postgres.psql('DROP DATABASE IF EXISTS bench2')
    postgres.psql('CREATE DATABASE bench2')
    const url2 = postgres.url.replace(/\/[^/]*$/, '/bench2')
    if (wanted('postgres2')) await withInstances(2, () => pgArgs(url2), postgres2, rollbacks('bench2'))
    if (wanted('limits-pg')) {
      postgres.psql('DROP DATABASE IF EXISTS limits')
      postgres.psql('CREATE DATABASE limits')
      const url = postgres.url.replace(/\/[^/]*$/, '/limits')
      await withInstances(
        1,
        () => ['--database-url', url, '--master-key-file', keyFile],
        limitsColumn,
        undefined,
        undefined,
        measureLimits,
      )
    }
  }
} finally {
  await postgres?.dispose()
  rmSync(temp, { recursive: true, force: true })
}

const cell = (column: Column, pick: (r: NonNullable<Column['result']>) => string) =>
  column.result ? pick(column.result) : 'n/a'
const ms = (n: number) => `${n.toFixed(1)} ms`
const percent = (share: number | undefined) => (share === undefined ? 'n/a' : `${(share * 100).toFixed(0)}%`)
const rate = (n: number) => `${n.toFixed(0)}/s`
/** Throughput lost from `off` to `on`, as a share of `off`'s (negative: `on` was faster). */
const costOf = (on: Run, off: Run) => ((off.perSecond - on.perSecond) / off.perSecond) * 100
const cost = (on: Run, off: Run) =>
  Number.isNaN(on.perSecond) || Number.isNaN(off.perSecond) ? 'n/a' : `${costOf(on, off).toFixed(1)}%`
const skippedRun: Run = { perSecond: Number.NaN, p50: Number.NaN, p99: Number.NaN, failed: 0 }
const failures = (run: Pick<Run, 'failed' | 'firstFailure'>) =>
  run.failed ? `${run.failed} (first: ${run.firstFailure})` : '0'
console.log(
  `Latchkey service over loopback HTTP: ${REQUESTS} requests per workload, ${CLIENTS} concurrent clients, ` +
    `stamped P-256 requests prepared before timing; node ${process.version}, ${cpus().length} cores ` +
    `(client and service processes share them)` +
    (flags['node-args'] ? `; service processes run with ${flags['node-args']}` : ''),
)
console.log(
  `raw rate, noble's secp256k1 signing (keccak256) in one thread: ${rate(rawPerSecond)}; ` +
    `the service's signRawPayload (libsecp256k1) in one thread: ${rate(serviceSignerPerSecond)}`,
)
/** One workload's rows: a figure of its run in each column. */
function workloadRows(title: string, runOf: (result: NonNullable<Column['result']>) => Run, signing = false) {
  const row = (label: string, show: (run: Run) => string) => [
    label,
    ...columns.map((c) => cell(c, (result) => show(runOf(result)))),
  ]
  const optional = (n: number | undefined) => (n === undefined ? '-' : String(n))
  return [
    row(`${title} throughput`, (run) => rate(run.perSecond)),
    row('  p50', (run) => ms(run.p50)),
    row('  p99', (run) => ms(run.p99)),
    ...(signing
      ? [
          row('  HTTP / raw signing rate (target ≥ 0.80 on one process)', (run) =>
            (run.perSecond / rawPerSecond).toFixed(2),
          ),
        ]
      : []),
    row('  failed requests', failures),
    row('  bench client CPU: per request / of one core', (run) => clientCell(run.client)),
    row('  CPU left idle during the run (all cores)', (run) => percent(run.idle)),
    row('  CPU per request, ms: service / PostgreSQL', (run) =>
      run.cpuPerRequest
        ? `${run.cpuPerRequest.service.toFixed(2)} / ${run.cpuPerRequest.postgres.toFixed(2)}`
        : 'n/a',
    ),
    row('    of which its main thread', (run) =>
      run.cpuPerRequest ? run.cpuPerRequest.main.toFixed(2) : 'n/a',
    ),
    row('  transactions rolled back (conflicts, rerun)', (run) => optional(run.rolledBack)),
    row('  statements PostgreSQL runs for one request (its log)', (run) => optional(run.statements)),
    row('  transactions per commit under load (SQLite group commit)', (run) =>
      run.perCommit === undefined ? '-' : run.perCommit.toFixed(1),
    ),
    row('  requests per statement under load: reads ahead / inserts', (run) =>
      run.perStatement
        ? `${run.perStatement.lookups.toFixed(1)} / ${run.perStatement.inserts.toFixed(1)}`
        : '-',
    ),
  ]
}
type PacedRun = NonNullable<Column['result']>['signPaced'][number]
const clientCell = (client: ClientCpu | undefined) =>
  client ? `${client.perRequest.toFixed(3)} ms / ${percent(client.ofACore)}` : 'n/a'
const pacedRows = (): string[][] =>
  PACED.flatMap((share, n) => {
    if (!columns.some((column) => column.result?.signPaced[n])) return []
    const row = (label: string, show: (run: PacedRun) => string) => [
      label,
      ...columns.map((c) => {
        const run = c.result?.signPaced[n]
        return run ? show(run) : 'n/a'
      }),
    ]
    return [
      row(
        `sign_raw_payloads paced at ${share} of raw (open loop, ${CLIENTS} connections)`,
        (run) => `${rate(run.offered)} offered`,
      ),
      row('  answered', (run) => rate(run.perSecond)),
      row('  p50 from when due', (run) => ms(run.p50)),
      row('  p99 from when due (target ≤ 150 ms)', (run) => ms(run.p99)),
      row('  failed requests', failures),
      row('  bench client CPU: per request / of one core', (run) => clientCell(run.client)),
    ]
  })
/** The stages of several runs side by side: p50 / p99 ms and count of each, a column a run. */
function printStageTable(what: string, runs: { title: string; stages: Stages | undefined }[]): void {
  const stages = [...new Set(runs.flatMap((run) => Object.keys(run.stages ?? {})))]
  console.log(`\nThe service's stages, ${what} (p50 / p99 ms, count; /dev/timings):`)
  printTable(
    ['stage', ...runs.map((run) => run.title)],
    stages.map((stage) => [
      stage,
      ...runs.map((run) => {
        const figures = run.stages?.[stage]
        return figures ? `${figures.p50.toFixed(2)} / ${figures.p99.toFixed(2)} (${figures.count})` : '-'
      }),
    ]),
  )
}
/** The service's own time per stage in each paced run: p50 / p99 (ms) of the first instance. */
function printStages(): void {
  for (const [n, share] of PACED.entries()) {
    const runs = columns.map((column) => column.result?.signPaced[n]?.stages)
    if (!runs.some(Boolean)) continue
    printStageTable(
      `paced at ${share} of raw`,
      columns.map((column, i) => ({ title: column.name, stages: runs[i] })),
    )
  }
}
printTable(
  ['', ...columns.map((c) => c.name)],
  [
    ...workloadRows('sign_raw_payloads (1 payload)', (result) => result.sign, true),
    ...(SMALL_CLIENTS > 0
      ? workloadRows(
          `sign_raw_payloads, ${SMALL_CLIENTS} clients`,
          (result) => result.signSmall ?? skippedRun,
          true,
        )
      : []),
    ...pacedRows(),
    ...workloadRows('create_wallet (1 ETH account)', (result) => result.wallets),
  ],
)
const [one, two] = [postgres1.result, postgres2.result]
if (one && two)
  console.log(
    `PostgreSQL, 2 processes vs 1 (target > 1.00): sign_raw_payloads ${(two.sign.perSecond / one.sign.perSecond).toFixed(2)}x, ` +
      `create_wallet ${(two.wallets.perSecond / one.wallets.perSecond).toFixed(2)}x`,
  )
if (pairs.length === 1)
  console.log(
    `metrics + JSON logs on vs off, in memory (target cost ≤ 5%): sign_raw_payloads ${cost(pairs[0]!.on.sign, pairs[0]!.off.sign)}, ` +
      `create_wallet ${cost(pairs[0]!.on.wallets, pairs[0]!.off.wallets)}`,
  )
else if (pairs.length > 1)
  for (const workload of ['sign', 'wallets'] as const) {
    const costs = pairs
      .map((pair) => costOf(pair.on[workload], pair.off[workload]))
      .filter((value) => !Number.isNaN(value))
    if (costs.length === 0) continue
    console.log(
      `metrics + JSON logs on vs off, in memory, ${pairs.length} rounds off/on in turn (target cost ≤ 5%): ` +
        `${workload === 'sign' ? 'sign_raw_payloads' : 'create_wallet'} median ${median(costs).toFixed(1)}% ` +
        `(each round: ${costs.map((value) => `${value.toFixed(1)}%`).join(', ')})`,
    )
  }
for (const workload of ['sign', 'wallets'] as const) {
  const ratios = webhookPairs
    .map((pair) => pair.on[workload].perSecond / pair.off[workload].perSecond)
    .filter((value) => !Number.isNaN(value))
  if (ratios.length === 0) continue
  console.log(
    `3 webhook endpoints on every event vs none, in memory (target ≥ 0.95): ` +
      `${workload === 'sign' ? 'sign_raw_payloads' : 'create_wallet'} ${median(ratios).toFixed(2)}` +
      (ratios.length > 1 ? ` (each round: ${ratios.map((value) => value.toFixed(2)).join(', ')})` : ''),
  )
}
if (webhookPairs.length > 0)
  console.log(
    `webhook deliveries received: ${webhookFigures.duringRuns} while the timed runs went on, ${webhookFigures.after} after them ` +
      `(the last ${webhookFigures.drainMs.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(', ')} after each round's runs ended; ` +
      `service CPU ${webhookFigures.cpuPerDelivery.map((ms) => ms.toFixed(2)).join(', ')} ms a delivery). Delivery runs from the job queue, ` +
      `never in a request; while 32 or more requests are in flight a delivery waits until it is 10 s old ([webhooks] busy_delay_ms)`,
  )
if (durableRounds.length > 1)
  for (const workload of ['sign', 'wallets'] as const) {
    const name = workload === 'sign' ? 'sign_raw_payloads' : 'create_wallet'
    const ratios = (of: (round: (typeof durableRounds)[number]) => number) => {
      const each = durableRounds.map(of).filter((value) => !Number.isNaN(value))
      return each.length === 0
        ? 'n/a'
        : `median ${median(each).toFixed(2)} (each round: ${each.map((value) => value.toFixed(2)).join(', ')})`
    }
    const rates = (pick: (round: (typeof durableRounds)[number]) => Run | undefined) =>
      durableRounds.map((round) => pick(round)?.perSecond ?? Number.NaN)
    const pg = rates((round) => round.postgres?.[workload])
    const lite = rates((round) => round.sqlite?.[workload])
    // A backend or a workload that did not run (`--only`, `--workloads`) is left out.
    const ran = (values: number[]) => values.some((value) => !Number.isNaN(value))
    if (!ran(pg) && !ran(lite)) continue
    const parts = [
      ...(ran(pg) ? [`PostgreSQL ${pg.map(rate).join(', ')}`] : []),
      ...(ran(lite) ? [`SQLite ${lite.map(rate).join(', ')}`] : []),
      ...(ran(pg) && ran(lite)
        ? [
            `PostgreSQL / SQLite ${ratios((round) => (round.postgres?.[workload].perSecond ?? Number.NaN) / (round.sqlite?.[workload].perSecond ?? Number.NaN))}`,
          ]
        : []),
      ...(workload === 'sign' && ran(pg)
        ? [
            `PostgreSQL / raw ${ratios((round) => (round.postgres?.sign.perSecond ?? Number.NaN) / round.raw)}`,
          ]
        : []),
    ]
    console.log(`${durableRounds.length} rounds in turn, ${name}: ${parts.join('; ')}`)
  }
if (durableRounds.length > 0)
  console.log(
    `raw rate before / after each round (the machine's speed, and how far it drifted during the round): ${durableRounds
      .map((round) => `${rate(round.raw)} / ${round.rawAfter === undefined ? 'n/a' : rate(round.rawAfter)}`)
      .join(', ')}`,
  )
for (const [n, share] of PACED.entries()) {
  /** Each backend's paced runs at this share, one per round, shown by `show` ("" when none ran). */
  const backends = (show: (name: string, ran: PacedRun[]) => string) =>
    (
      [
        ['SQLite', durableRounds.map((round) => round.sqlite?.signPaced[n])],
        ['PostgreSQL', durableRounds.map((round) => round.postgres?.signPaced[n])],
      ] as const
    )
      .map(([name, runs]) => [name, runs.filter((run): run is PacedRun => run !== undefined)] as const)
      .filter(([, ran]) => ran.length > 0)
      .map(([name, ran]) => show(name, ran))
      .join('; ')
  const shown = backends(
    (name, ran) =>
      `${name} ${ran.map((run) => `${run.p50.toFixed(1)}/${run.p99.toFixed(1)}`).join(', ')} ` +
      `(median ${median(ran.map((run) => run.p50)).toFixed(1)}/${median(ran.map((run) => run.p99)).toFixed(1)})`,
  )
  if (shown)
    console.log(`paced at ${share} of raw, p50/p99 ms in each of ${durableRounds.length} rounds: ${shown}`)
  // What ran beside each of those runs: where a slow one spent its time that a fast one did not.
  const beside = backends(
    (name, ran) =>
      `${name} ${ran
        .map((run) => {
          const loop = run.stages?.['event loop']
          const commit = run.stages?.commit
          return (
            `[loop ${loop ? `${loop.p99.toFixed(0)}/${loop.max.toFixed(0)}` : '-'}, ` +
            `gc ${run.stages?.gc?.total.toFixed(0) ?? '-'}, ` +
            `commit ${commit ? `${commit.count}× ${commit.p50.toFixed(1)}/${commit.p99.toFixed(1)}/${commit.max.toFixed(1)}` : '-'}, ` +
            `disk ${run.beside.diskMB.toFixed(0)} MB` +
            (run.beside.checkpoints === undefined ? '' : `, ${run.beside.checkpoints} ckpt`) +
            ']'
          )
        })
        .join(' ')}`,
  )
  if (beside)
    console.log(
      `  beside each: [event-loop delay p99/max ms, GC pauses ms in all, commit statements: how many× p50/p99/max ms (SQLite, or PostgreSQL's lock groups), MB the disks wrote, PostgreSQL checkpoints]: ${beside}`,
    )
}
printStages()
console.log(
  `load average (1 min) at the start: ${LOAD_AT_START.toFixed(2)}, at the end: ${loadavg()[0]!.toFixed(2)} ` +
    `(${cpus().length} cores; other processes' load makes every figure slower and noisier)`,
)
const LIMIT_SHAPES: Record<LimitShape, string> = {
  hot: `one account at ${CLIENTS}-way concurrency, one limit (serial by nature)`,
  many: `${MANY_ACCOUNTS} accounts (sub-organizations), each under its own limit`,
}
/** The rate of two runs of one size taken together: their requests over their time. */
const together = ([a, b]: [Run, Run]) => 2 / (1 / a.perSecond + 1 / b.perSecond)
for (const [shape, rounds] of Object.entries(limitRounds) as [LimitShape, LimitRound[]][]) {
  if (rounds.length === 0) continue
  const ratios = rounds.map((round) => together(round.on) / together(round.off))
  const runs = rounds.flatMap((round) => [...round.on, ...round.off])
  const failed = runs.reduce((sum, run) => sum + run.failed, 0)
  const rates = (pair: [Run, Run]) => pair.map((run) => rate(run.perSecond)).join(' + ')
  console.log(
    `sign_transaction under a spending limit vs none, PostgreSQL 1 process, ${LIMIT_SHAPES[shape]} (target ≥ 0.90): ${median(ratios).toFixed(2)}` +
      ` (each round, limited / no limit, two runs each: ${rounds.map((round, n) => `${ratios[n]!.toFixed(2)} = ${rates(round.on)} / ${rates(round.off)}, p99 ${ms(round.on[1].p99)} / ${ms(round.off[1].p99)}`).join('; ')})` +
      (failed ? `; ${failed} failed, first: ${runs.map((run) => run.firstFailure).find(Boolean)}` : ''),
  )
  // Where the time goes: CPU bound (little idle) or waiting (idle cores while requests queue).
  const cpu = ([a, b]: [Run, Run]) => {
    const mean = (pick: (cpu: NonNullable<Run['cpuPerRequest']>) => number) =>
      ((pick(a.cpuPerRequest!) + pick(b.cpuPerRequest!)) / 2).toFixed(2)
    const idle = a.idle === undefined || b.idle === undefined ? undefined : (a.idle + b.idle) / 2
    return `${a.cpuPerRequest && b.cpuPerRequest ? `${mean((c) => c.service)} / ${mean((c) => c.main)} / ${mean((c) => c.postgres)} ms` : '-'}, idle ${percent(idle)}`
  }
  const last = rounds.at(-1)!
  console.log(
    `  last round, CPU per request, the mean of its two runs (service / its main thread / PostgreSQL) and CPU left idle: limited ${cpu(last.on)}; no limit ${cpu(last.off)}`,
  )
}
{
  // The last round's stages of each limits run: where a limited signing waits that one without does not.
  const last = (['hot', 'many'] as const).flatMap((shape) => {
    const pair = limitRounds[shape].at(-1)
    return pair
      ? [
          { title: `${shape}, no limit`, stages: pair.off[1].stages },
          { title: `${shape}, limited`, stages: pair.on[1].stages },
        ]
      : []
  })
  if (last.some((run) => run.stages)) printStageTable('in the last round of limits-pg', last)
  for (const shape of ['hot', 'many'] as const) {
    const pair = limitRounds[shape].at(-1)
    for (const [side, run] of [
      ['no limit', pair?.off[1]],
      ['limited', pair?.on[1]],
    ] as const)
      if (run?.costliest)
        console.log(
          `\nPostgreSQL's costliest statements, ${shape}, ${side}, last round (pg_stat_statements):\n${run.costliest.trim()}`,
        )
  }
}
for (const column of [...columns, limitsColumn])
  if (column.logged) console.log(`${column.name}: the service logged ${column.logged}`)
const broken = [...columns, limitsColumn].filter((c) => c.error)
for (const column of broken) console.log(`${column.name}: ${column.error}`)
process.exit(broken.length ? 1 : 0)
