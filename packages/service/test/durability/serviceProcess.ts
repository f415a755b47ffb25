// Black-box helpers for the durability tests: `latchkey-service dev --port 0 --json …` as a child
// process (through tsx, from the repository's root), and a client that sends stamped activities
// and queries to it over loopback HTTP with the dev API key from its `--json` line.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { ACTIVITIES, type AccountSpec, type ActivityPath } from '@latchkey/protocol'
import { hexToBytes } from '@noble/hashes/utils.js'
import { signApiKeyStamp } from '../../src/crypto/index.ts'

export const root = fileURLToPath(new URL('../../../../', import.meta.url))
const CLI = join(root, 'packages/service/src/cli.ts')

/** What `--json` prints (the fields these tests read). */
export interface DevInfo {
  baseUrl: string
  organizationId: string
  authProxyConfigId: string | null
  apiPublicKey: string
  apiPrivateKey: string
  outboxUrl: string
  trustedSignerPublicKey: string
}

export interface StartOptions {
  /** Flags after `dev --port 0 --json`. */
  args?: string[]
  /** Extra environment variables. */
  env?: Record<string, string>
  /**
   * A soft RLIMIT_FSIZE in KiB (`ulimit -S -f`, set by a `bash -c` wrapper that then `exec`s node, so
   * the child's pid is node's): no file the service writes may grow past it. Writing past it fails
   * with EFBIG (Node ignores SIGXFSZ). `raiseFileSizeLimit` lifts it from outside.
   */
  fileSizeLimitKiB?: number
  timeoutMs?: number
  /** Flags for node itself, before the script (e.g. `--cpu-prof`). */
  nodeArgs?: string[]
}

export interface ServiceProcess {
  info: DevInfo
  child: ChildProcess
  pid: number
  /** Everything the service wrote to stderr so far. */
  stderr(): string
  /** Resolves when the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** kill -9 and wait for the exit. */
  crash(): Promise<void>
  /** SIGTERM and wait; resolves with the exit code (SIGKILL after 10 s, then null). */
  stop(): Promise<number | null>
}

const running = new Set<ChildProcess>()

/** SIGKILLs every service a test started and did not stop (for afterEach/afterAll). */
export function killAll(): void {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  running.clear()
}

function spawnCli(options: StartOptions): ChildProcess {
  const nodeArgs = [
    ...(options.nodeArgs ?? []),
    '--import',
    'tsx',
    CLI,
    'dev',
    '--port',
    '0',
    '--json',
    ...(options.args ?? []),
  ]
  const env = { ...process.env, NODE_ENV: 'development', ...options.env }
  const spawnOptions = { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'] }
  if (options.fileSizeLimitKiB === undefined) return spawn(process.execPath, nodeArgs, spawnOptions)
  const limit = Math.ceil(options.fileSizeLimitKiB)
  return spawn(
    'bash',
    ['-c', `ulimit -S -f ${limit} && exec "$0" "$@"`, process.execPath, ...nodeArgs],
    spawnOptions,
  )
}

/** Starts the service and resolves once it printed its `--json` line. */
export async function startService(options: StartOptions = {}): Promise<ServiceProcess> {
  const child = spawnCli(options)
  running.add(child)
  let stderr = ''
  child.stderr!.setEncoding('utf8')
  child.stderr!.on('data', (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child)
      resolve({ code, signal })
    }),
  )
  const timeoutMs = options.timeoutMs ?? 60_000
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`the service printed no --json line within ${timeoutMs} ms\n${stderr}`))
    }, timeoutMs)
    const lines = createInterface({ input: child.stdout! })
    lines.once('line', (first) => {
      clearTimeout(timer)
      resolve(first)
    })
    void exited.then(({ code, signal }) => {
      clearTimeout(timer)
      reject(new Error(`the service exited (${signal ?? code}) before it was ready\n${stderr}`))
    })
  })
  const info = JSON.parse(line) as DevInfo
  return {
    info,
    child,
    pid: child.pid!,
    stderr: () => stderr,
    exited,
    async crash() {
      child.kill('SIGKILL')
      await exited
    },
    async stop() {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      const { code } = await exited
      clearTimeout(timer)
      return code
    },
  }
}

/**
 * Runs the CLI to its exit (for starts that must be refused). A service that starts instead (prints
 * its `--json` line) is killed at once, so the caller sees `signal: 'SIGKILL'` and the line.
 */
export async function runToExit(
  options: StartOptions,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const child = spawnCli(options)
  running.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    if (stdout.includes('\n')) child.kill('SIGKILL')
  })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (c, s) => resolve([c, s])),
  )
  clearTimeout(timer)
  running.delete(child)
  return { code, signal, stdout, stderr }
}

/** Lifts the soft file-size limit of a running process (space is back, no restart). */
export async function raiseFileSizeLimit(pid: number): Promise<void> {
  await promisify(execFile)('prlimit', ['--pid', String(pid), '--fsize=unlimited:unlimited'])
}

export const ETHEREUM_ACCOUNT: AccountSpec = {
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/60'/0'/0/0",
  addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
}

export const SOLANA_ACCOUNT: AccountSpec = {
  curve: 'CURVE_ED25519',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/501'/0'/0'",
  addressFormat: 'ADDRESS_FORMAT_SOLANA',
}

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes
export type Json = any

export interface Reply {
  status: number
  body: Json
}

/** A stamped request, built before it is sent, so it can be sent again byte for byte (a replay). */
export interface Prepared {
  path: string
  body: string
  stamp: string
}

/** Stamped activity and query calls with the dev API key; timestamps are unique and increasing. */
export class DevClient {
  private lastTimestamp = 0
  private readonly privateKey: Uint8Array

  constructor(
    public baseUrl: string,
    public readonly info: DevInfo,
  ) {
    this.privateKey = hexToBytes(info.apiPrivateKey)
  }

  private timestamp(): string {
    this.lastTimestamp = Math.max(Date.now(), this.lastTimestamp + 1)
    return String(this.lastTimestamp)
  }

  private prepareRaw(path: string, payload: object): Prepared {
    const body = JSON.stringify(payload)
    const stamp = signApiKeyStamp(body, {
      scheme: 'SIGNATURE_SCHEME_TK_API_P256',
      privateKey: this.privateKey,
    })
    return { path, body, stamp }
  }

  prepareActivity(path: ActivityPath, parameters: object): Prepared {
    return this.prepareRaw(`/public/v1/submit/${path}`, {
      type: ACTIVITIES[path].type,
      timestampMs: this.timestamp(),
      organizationId: this.info.organizationId,
      parameters,
    })
  }

  prepareQuery(path: string, body: object = {}): Prepared {
    return this.prepareRaw(`/public/v1/query/${path}`, { organizationId: this.info.organizationId, ...body })
  }

  /** `/dev/settings/update` with a partial ProxySettings. */
  prepareSettings(settings: object): Prepared {
    return this.prepareRaw('/dev/settings/update', {
      organizationId: this.info.organizationId,
      timestampMs: this.timestamp(),
      settings,
    })
  }

  /** Sends; rejects only when no HTTP answer came (connection refused or reset). */
  async send(prepared: Prepared, baseUrl = this.baseUrl): Promise<Reply> {
    const response = await fetch(`${baseUrl}${prepared.path}`, {
      method: 'POST',
      body: prepared.body,
      headers: { 'Content-Type': 'application/json', 'X-Stamp': prepared.stamp },
    })
    const text = await response.text()
    let body: Json = text
    try {
      body = JSON.parse(text)
    } catch {}
    return { status: response.status, body }
  }

  submit(path: ActivityPath, parameters: object): Promise<Reply> {
    return this.send(this.prepareActivity(path, parameters))
  }

  query(path: string, body: object = {}): Promise<Reply> {
    return this.send(this.prepareQuery(path, body))
  }
}

/** The activity's result of a 200, or an error naming the status and body. */
export function resultOf(path: ActivityPath, reply: Reply): Json {
  if (reply.status !== 200) throw new Error(`${path} answered ${reply.status} ${JSON.stringify(reply.body)}`)
  return reply.body.activity.result[ACTIVITIES[path].resultKey]
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `latchkey-${prefix}-`))
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true })
}

/** name → sha256 of every regular file in `dir` (recursively), with its mode. */
export function hashTree(dir: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    const stat = statSync(path)
    if (stat.isDirectory()) Object.assign(out, hashTree(path, `${prefix}${name}/`))
    else
      out[`${prefix}${name}`] =
        `${(stat.mode & 0o777).toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`
  }
  return out
}

export const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}
export const median = (values: number[]): number => percentile(values, 50)
