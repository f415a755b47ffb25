/**
 * `npm run bench:import [-- --users N] [-- --large] [-- --backend sqlite|postgres]`: N generated
 * users (default 1,000; --large: 100,000), each with an e-mail and a wallet given as a plaintext
 * mnemonic in an owner-only file, imported through the import path (`bulkImport`: the file read
 * line by line, each mnemonic HPKE-encrypted to the import key, one stamped `latchkey_import_user`
 * per user, one transaction each) into a service in this process configured as `latchkey-service
 * start` runs it (crypto worker threads, native stamp verification), on SQLite (a data directory)
 * and on PostgreSQL. Prints users per minute and peak RSS per backend and, beside them, the raw
 * rate of the service's own wallet derivation (BIP-39 seed + one BIP-32 account) on one core, and
 * where the time of a user goes (its request, the crypto job, transaction reruns). Starts and
 * removes its own PostgreSQL (scripts/postgres.mjs). Asserts nothing. `-- --rerun` then runs the
 * same file again, every line already imported, and prints what the rerun took (a resumed import's
 * cost for the part already done).
 *
 * `-- --cli [--kill-at K]` (`--kill-at` implies `--cli`) runs the operator's path instead:
 * `latchkey-service import` against a `latchkey-service` process on PostgreSQL, killed with
 * SIGKILL once K users are done and run again, then counts the database (bench/importCli.ts):
 * `npm run bench:import -- --users 100000 --kill-at 50000` is the issue's 100,000-user run.
 * `-- --cli --profile DIR` writes V8 CPU profiles of the service and the import processes into DIR.
 */

import { once } from 'node:events'
import { chmodSync, createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { hexToBytes } from '@noble/hashes/utils.js'
import { createService } from '../packages/service/src/assembly/createService.ts'
import { bulkImport } from '../packages/service/src/importing/bulkImport.ts'
import { importClient } from '../packages/service/src/importing/importClient.ts'
import type { EventSink } from '../packages/service/src/kernel/base/events.ts'
import { deriveAccount, generateMnemonic, seedOf } from '../packages/service/src/kernel/crypto/index.ts'
import { openDataDir, openPostgres } from '../packages/service/src/kernel/store/durableStores.ts'
import type { Store } from '../packages/service/src/kernel/store/Store.ts'
import { ETHEREUM_ACCOUNT } from '../packages/service/src/testing/harness.ts'
import { cryptoWorkers } from '../packages/service/src/workers/cryptoWorkers.ts'
import { nativeVerifyP256 } from '../packages/service/src/workers/nativeVerify.ts'
import { startPostgres } from '../scripts/postgres.mjs'
import { importThroughCli } from './importCli.ts'

const { values } = parseArgs({
  options: {
    users: { type: 'string' },
    large: { type: 'boolean' },
    concurrency: { type: 'string' },
    backend: { type: 'string' },
    cli: { type: 'boolean' },
    'kill-at': { type: 'string' },
    rerun: { type: 'boolean' },
    profile: { type: 'string' },
  },
})
const users = Number(values.users ?? (values.large ? 100_000 : 1000))
const concurrency = Number(values.concurrency ?? 16)
const backends = values.backend ? [values.backend] : ['sqlite', 'postgres']
const killAt = values['kill-at'] === undefined ? undefined : Number(values['kill-at'])
if (killAt !== undefined && !(killAt > 0 && killAt < users))
  throw new Error(`--kill-at must be between 0 and --users (${users}), got ${values['kill-at']}`)

const dir = mkdtempSync(join(tmpdir(), 'latchkey-bench-import-'))
const file = join(dir, 'users.jsonl')
const out = createWriteStream(file, { mode: 0o600 })
for (let i = 0; i < users; i++) {
  const line = {
    externalId: `bench-${i}`,
    email: `bench-${i}@example.com`,
    wallets: [{ walletName: 'Main', mnemonic: generateMnemonic(12), accounts: [ETHEREUM_ACCOUNT] }],
  }
  if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain')
}
await new Promise<void>((resolve) => out.end(resolve))
chmodSync(file, 0o600)

// The raw rate of the service's own derivation: what a wallet costs before any storage.
const rawCount = Math.min(users, 300)
const mnemonics = Array.from({ length: rawCount }, () => generateMnemonic(12))
const rawStarted = performance.now()
for (const mnemonic of mnemonics) deriveAccount(await seedOf(mnemonic), ETHEREUM_ACCOUNT)
const rawPerMinute = (rawCount * 60_000) / (performance.now() - rawStarted)

/** What one backend's run measured. */
interface Run {
  backend: string
  perMinute: number
  seconds: number
  peakRss: number
  imported: number
  rejected: number
  retries: number
  cryptoMs: number
  /** CPU time of this process (every thread: client, service, crypto workers) per user imported. */
  cpuMsPerUser: number
  /** `--rerun`: the same file again once every user is in, each line skipped. */
  rerun?: { seconds: number; skipped: number; imported: number; perMinute: number }
}

/** How the bench's client submits: as `latchkey-service import` does. */
const importOptions = (client: ReturnType<typeof importClient>) => ({
  submit: (params: Parameters<typeof client.importUser>[0]) => client.importUser(params),
  importKey: () => client.importKey(),
  alreadyImported: (externalIds: string[]) => client.importedAmong(externalIds),
  concurrency,
})

async function importInto(backend: string, store: Store): Promise<Run> {
  let retries = 0
  let cryptoSeconds = 0
  let cryptoJobs = 0
  const events: EventSink = {
    emit(name, data) {
      if (name === 'store.retry') retries++
      if (name === 'crypto.finished') {
        cryptoSeconds += (data as { seconds: number }).seconds
        cryptoJobs++
      }
    },
  }
  // As `latchkey-service start` runs: crypto in worker threads, stamps verified natively.
  const service = await createService({
    store,
    crypto: cryptoWorkers(),
    verifyP256: nativeVerifyP256,
    events,
  })
  try {
    const client = importClient({
      url: 'http://bench.invalid',
      organizationId: service.dev.organizationId,
      privateKey: hexToBytes(service.dev.apiPrivateKey),
      trustedSignerPublicKey: hexToBytes(service.dev.signerPublicKey),
      fetch: (input, init) => service.fetch(input, init),
    })
    let peakRss = process.memoryUsage().rss
    const cpu = process.cpuUsage()
    const sample = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss)
    }, 250)
    const totals = await bulkImport({
      file,
      ...importOptions(client),
      progressEveryMs: 5000,
      onProgress: (p) =>
        process.stderr.write(
          `  ${backend}: ${p.imported + p.skipped}/${users} · ${Math.round(p.perMinute)}/min\n`,
        ),
      onRejected: (r) => process.stderr.write(`  line ${r.line}: ${r.reason}\n`),
    }).finally(() => clearInterval(sample))
    const used = process.cpuUsage(cpu)
    // A rerun of the whole file once every user is in: what a resumed import pays per line done.
    let rerun: Run['rerun']
    if (values.rerun) {
      const again = await bulkImport({ file, ...importOptions(client) })
      rerun = {
        seconds: again.elapsedMs / 1000,
        skipped: again.skipped,
        imported: again.imported,
        perMinute: (again.skipped * 60_000) / again.elapsedMs,
      }
    }
    return {
      ...(rerun ? { rerun } : {}),
      cpuMsPerUser: (used.user + used.system) / 1000 / Math.max(1, totals.imported),
      backend,
      perMinute: totals.perMinute,
      seconds: totals.elapsedMs / 1000,
      peakRss: Math.max(peakRss, process.memoryUsage().rss),
      imported: totals.imported,
      rejected: totals.rejected,
      retries,
      cryptoMs: cryptoJobs ? (cryptoSeconds * 1000) / cryptoJobs : 0,
    }
  } finally {
    await service.close()
  }
}

const loadLine = () =>
  `  load average now: ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')} on ${availableParallelism()} cores (other processes share them)`
const rawLine = `  raw wallet derivation (1 core): ${Math.round(rawPerMinute)} per minute (${(60_000 / rawPerMinute).toFixed(1)} ms each)`

if (values.cli || killAt !== undefined) {
  try {
    const run = await importThroughCli({
      file,
      users,
      dir,
      concurrency,
      ...(killAt ? { killAt } : {}),
      ...(values.profile ? { profileDir: values.profile } : {}),
    })
    console.log(
      [
        `import through \`latchkey-service import\` into PostgreSQL: ${users} users with one wallet each, concurrency ${concurrency}` +
          (killAt ? `, killed with SIGKILL at ${killAt} and run again` : ''),
        rawLine,
        loadLine(),
        `  mean load average during the run: ${run.meanLoad.toFixed(1)}`,
        ...run.runs.map(
          (r, i) =>
            `  ${run.runs.length > 1 ? (i === 0 ? 'first run' : 'rerun    ') : 'run      '} ${r.seconds.toFixed(0).padStart(6)} s, ` +
            `${r.signal ? `killed (${r.signal})` : `exit ${r.code}`}: ${r.last.imported} imported, ${r.last.skipped} skipped, ` +
            `${r.last.rejected} rejected; import process peak RSS ${Math.round(r.peakRssMiB)} MiB`,
        ),
        `  total ${run.seconds.toFixed(0)} s: ${Math.round(run.perMinute)} users/min; service peak RSS ${Math.round(run.servicePeakRssMiB)} MiB`,
        `  made in the database: ${Object.entries(run.counts)
          .map(([table, n]) => `${table} ${n}`)
          .join(', ')}` +
          (Object.values(run.counts).every((n) => n === users)
            ? ' (one each per user: no duplicate)'
            : ' (NOT one per user)'),
      ].join('\n'),
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  process.exit(0)
}

const runs: Run[] = []
try {
  for (const backend of backends) {
    if (backend === 'postgres') {
      const postgres = await startPostgres()
      try {
        runs.push(await importInto('PostgreSQL', await openPostgres(postgres.url)))
      } finally {
        await postgres.stop()
      }
    } else if (backend === 'sqlite') {
      const dataDir = mkdtempSync(join(dir, 'data-'))
      runs.push(await importInto('SQLite', await openDataDir(dataDir)))
    } else throw new Error(`--backend must be sqlite or postgres, got ${backend}`)
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}

console.log(
  [
    `import: ${users} users with one wallet each, concurrency ${concurrency} (goal ≥ 2,400/min; Privy's published rate: 240)`,
    rawLine,
    loadLine(),
    ...runs.map(
      (r) =>
        `  ${r.backend.padEnd(11)} ${String(Math.round(r.perMinute)).padStart(6)} users/min  ` +
        `(${r.imported} imported, ${r.rejected} rejected in ${r.seconds.toFixed(1)} s; ` +
        `peak RSS ${Math.round(r.peakRss / 1024 / 1024)} MiB; ${r.retries} transaction reruns; ` +
        `crypto job ${r.cryptoMs.toFixed(1)} ms, in its queue; ${r.cpuMsPerUser.toFixed(1)} CPU-ms per user in this process)` +
        (r.rerun
          ? `\n  ${''.padEnd(11)} rerun of the whole file: ${r.rerun.skipped} skipped, ${r.rerun.imported} imported in ` +
            `${r.rerun.seconds.toFixed(1)} s (${Math.round(r.rerun.perMinute)} skipped lines/min)`
          : ''),
    ),
  ].join('\n'),
)
