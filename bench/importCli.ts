/**
 * The operator's path of `npm run bench:import -- --cli [--kill-at K]`: `latchkey-service import`
 * (the bundled CLI, as tests run it) against a `latchkey-service` process on a throwaway
 * PostgreSQL. With `--kill-at K` the import is killed with SIGKILL once K users are done, then run
 * again to the end; afterwards the database is counted: one sub-organization, one user and one
 * wallet per line, whatever the kill left in flight. Peak RSS is each process's high-water mark
 * (`VmHWM` of /proc/<pid>/status, read while it runs).
 */

import { spawn } from 'node:child_process'
import { readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { bytesToHex } from '@noble/hashes/utils.js'
import pg from 'pg'
import { cliCommand } from '../packages/service/test/support/cliEntry.ts'
import { startService } from '../packages/service/test/support/serviceProcess.ts'
import { startPostgres } from '../scripts/postgres.mjs'

export interface CliRunOptions {
  /** The JSONL file (owner-only), one user a line. */
  file: string
  users: number
  /** A scratch folder for the master key and the root key. */
  dir: string
  concurrency: number
  /** SIGKILL the import once this many users are done, then run it again. */
  killAt?: number
  /** Write a V8 CPU profile of the service and of each import process into this folder (`--cpu-prof`). */
  profileDir?: string
}

/** What one `import` process did. */
interface ImportProcessRun {
  signal: NodeJS.Signals | null
  code: number | null
  seconds: number
  last: Record<string, number>
  peakRssMiB: number
}

export interface CliRun {
  runs: ImportProcessRun[]
  seconds: number
  perMinute: number
  servicePeakRssMiB: number
  meanLoad: number
  /** Rows made per table beyond what the service held before, and external ids recorded. */
  counts: Record<string, number>
}

/** A process's peak resident set so far, in MiB (0 once it is gone). */
function peakRssMiB(pid: number): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) / 1024 : 0
  } catch {
    return 0
  }
}

function runImport(
  args: string[],
  killAt: number | undefined,
  onProgress: (line: string) => void,
  nodeArgs: string[] = [],
) {
  const started = performance.now()
  const child = spawn(process.execPath, [...nodeArgs, ...cliCommand(), 'import', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let peak = 0
  const sample = setInterval(() => {
    peak = Math.max(peak, peakRssMiB(child.pid!))
  }, 500)
  let last: Record<string, number> = {}
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-10_000)
  })
  createInterface({ input: child.stdout }).on('line', (line) => {
    const event = JSON.parse(line) as Record<string, number> & { event: string }
    if (event.event === 'rejected') {
      process.stderr.write(`  rejected: ${line}\n`)
      return
    }
    last = event
    peak = Math.max(peak, peakRssMiB(child.pid!))
    onProgress(
      `${event.event}: ${event.imported} imported, ${event.skipped} skipped, ${event.rejected} rejected · ${event.perMinute}/min`,
    )
    if (killAt !== undefined && Number(event.imported) + Number(event.skipped) >= killAt)
      child.kill('SIGKILL')
  })
  return new Promise<ImportProcessRun>((resolve, reject) =>
    child.once('close', (code, signal) => {
      clearInterval(sample)
      if (code !== 0 && signal === null) reject(new Error(`import exited ${code}\n${stderr}`))
      else resolve({ code, signal, seconds: (performance.now() - started) / 1000, last, peakRssMiB: peak })
    }),
  )
}

const COUNTED = ['organizations', 'users', 'wallets', 'walletAccounts', 'importedUsers'] as const

async function countRows(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const counts: Record<string, number> = {}
    for (const table of COUNTED)
      counts[table] = Number((await client.query(`select count(*) as n from "${table}"`)).rows[0].n)
    counts.distinctExternalIds = Number(
      (await client.query(`select count(distinct data::json->>'externalId') as n from "importedUsers"`))
        .rows[0].n,
    )
    return counts
  } finally {
    await client.end()
  }
}

export async function importThroughCli(options: CliRunOptions): Promise<CliRun> {
  const profile = options.profileDir ? ['--cpu-prof', '--cpu-prof-dir', options.profileDir] : []
  const postgres = await startPostgres()
  const loads: number[] = []
  // The bundled CLI's folder counts as in use while it is touched: a test run meanwhile (another
  // state of the sources) would otherwise prune it after ten minutes, before the rerun starts.
  const bundle = cliCommand().at(-1)!
  const loadSample = setInterval(() => {
    loads.push(loadavg()[0]!)
    const now = new Date()
    utimesSync(dirname(bundle), now, now)
  }, 5000)
  try {
    const masterKeyFile = join(options.dir, 'master.key')
    writeFileSync(masterKeyFile, `${bytesToHex(crypto.getRandomValues(new Uint8Array(32)))}\n`, {
      mode: 0o600,
    })
    const service = await startService({
      name: 'import target',
      args: ['--database-url', postgres.url, '--master-key-file', masterKeyFile],
      timeoutMs: 120_000,
      nodeArgs: profile,
    })
    let servicePeak = 0
    const serviceSample = setInterval(() => {
      servicePeak = Math.max(servicePeak, peakRssMiB(service.pid))
    }, 1000)
    try {
      const before = await countRows(postgres.url)
      const keyFile = join(options.dir, 'root.key')
      writeFileSync(keyFile, service.info.apiPrivateKey, { mode: 0o600 })
      const args = [
        '--from',
        options.file,
        '--url',
        service.baseUrl,
        '--organization-id',
        service.info.organizationId,
        '--root-key-file',
        keyFile,
        '--trusted-signer-public-key',
        service.info.trustedSignerPublicKey,
        '--concurrency',
        String(options.concurrency),
      ]
      const started = performance.now()
      let lastPrinted = 0
      const show = (prefix: string) => (line: string) => {
        if (performance.now() - lastPrinted < 15_000 && !line.startsWith('done')) return
        lastPrinted = performance.now()
        process.stderr.write(`  ${prefix} ${line} · load ${loadavg()[0]!.toFixed(1)}\n`)
      }
      const runs: ImportProcessRun[] = []
      if (options.killAt !== undefined) {
        const killed = await runImport(args, options.killAt, show('first run'), profile)
        runs.push(killed)
        process.stderr.write(
          `  first run: ${killed.signal ?? killed.code} after ${killed.seconds.toFixed(0)} s at ${killed.last.imported} imported\n`,
        )
      }
      runs.push(
        await runImport(args, undefined, show(options.killAt !== undefined ? 'rerun' : 'run'), profile),
      )
      const seconds = (performance.now() - started) / 1000
      servicePeak = Math.max(servicePeak, peakRssMiB(service.pid))
      const after = await countRows(postgres.url)
      const counts = Object.fromEntries(
        Object.entries(after).map(([table, n]) => [table, n - (before[table] ?? 0)]),
      )
      return {
        runs,
        seconds,
        perMinute: (options.users * 60) / seconds,
        servicePeakRssMiB: servicePeak,
        meanLoad: loads.length ? loads.reduce((a, b) => a + b, 0) / loads.length : loadavg()[0]!,
        counts,
      }
    } finally {
      clearInterval(serviceSample)
      await service.stop()
    }
  } finally {
    clearInterval(loadSample)
    await postgres.stop()
  }
}
