// The service as a black box: `latchkey-service dev --port 0 --json …` as a child process (the
// bundled CLI of support/cliEntry.ts, from the repository's root), started, stopped, crashed and
// watched by the durability and multi-instance tests and by bench:service. It lives outside
// `@latchkey/service/testing` because it needs Node, esbuild and the repository's sources, which
// the published test kit must not.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { cliCommand } from './cliEntry.ts'

export const root = fileURLToPath(new URL('../../../../', import.meta.url))

/** What `--json` prints (the fields the tests read). */
export interface DevInfo {
  baseUrl: string
  organizationId: string
  authProxyConfigId: string | null
  apiPublicKey: string
  apiPrivateKey: string
  outboxUrl: string
  trustedSignerPublicKey: string
  /** With `--admin-port`: its metrics and probes. */
  adminUrl?: string
}

export interface StartOptions {
  /** Names the process in error messages and logs. @default 'service' */
  name?: string
  /** Flags after `dev --port 0 --json`. */
  args?: string[]
  /** Environment variables over the test's own; `undefined` removes one. */
  env?: Record<string, string | undefined>
  /**
   * A soft RLIMIT_FSIZE in KiB (`ulimit -S -f`, set by a `bash -c` wrapper that then `exec`s node, so
   * the child's pid is node's): no file the service writes may grow past it. Writing past it fails
   * with EFBIG (Node ignores SIGXFSZ). `raiseFileSizeLimit` lifts it from outside.
   */
  fileSizeLimitKiB?: number
  /** How long to wait for the `--json` line (or, for `runToExit`, the exit). */
  timeoutMs?: number
  /** Flags for node itself, before the script (e.g. `--cpu-prof`). */
  nodeArgs?: string[]
}

export interface ServiceProcess {
  name: string
  info: DevInfo
  /** `info.baseUrl` without a trailing slash. */
  baseUrl: string
  child: ChildProcess
  pid: number
  /** What the service wrote to stderr so far (the last 100 KB at least, once it wrote more than 200 KB). */
  stderr(): string
  /** Resolves when the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** kill -9 and wait for the exit. */
  crash(): Promise<void>
  /** SIGTERM and wait; resolves with the exit code (SIGKILL after 10 s, then null). */
  stop(): Promise<number | null>
}

const running = new Set<ChildProcess>()
let exitHooked = false

/** SIGKILLs every service a test started and did not stop (for afterEach/afterAll). */
export function killAll(): void {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  running.clear()
}

function spawnCli(options: StartOptions): ChildProcess {
  if (!exitHooked) {
    exitHooked = true
    // A test process that dies without its afterAll still takes its services with it.
    process.on('exit', killAll)
  }
  const nodeArgs = [
    ...(options.nodeArgs ?? []),
    ...cliCommand(),
    'dev',
    '--port',
    '0',
    '--json',
    ...(options.args ?? []),
  ]
  const env: Record<string, string | undefined> = { ...process.env, NODE_ENV: 'development' }
  for (const [name, value] of Object.entries(options.env ?? {}))
    if (value === undefined) delete env[name]
    else env[name] = value
  const spawnOptions = { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'] }
  const child =
    options.fileSizeLimitKiB === undefined
      ? spawn(process.execPath, nodeArgs, spawnOptions)
      : spawn(
          'bash',
          [
            '-c',
            `ulimit -S -f ${Math.ceil(options.fileSizeLimitKiB)} && exec "$0" "$@"`,
            process.execPath,
            ...nodeArgs,
          ],
          spawnOptions,
        )
  running.add(child)
  return child
}

/** Starts the service and resolves once it printed its `--json` line. */
export async function startService(options: StartOptions = {}): Promise<ServiceProcess> {
  const name = options.name ?? 'service'
  const child = spawnCli(options)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
    if (stderr.length > 200_000) stderr = stderr.slice(-100_000)
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
      reject(new Error(`${name} printed no --json line within ${timeoutMs} ms\n${stderr}`))
    }, timeoutMs)
    createInterface({ input: child.stdout! }).once('line', (first) => {
      clearTimeout(timer)
      resolve(first)
    })
    void exited.then(({ code, signal }) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (${signal ?? code}) before it was ready\n${stderr}`))
    })
  })
  child.stdout!.resume()
  const info = JSON.parse(line) as DevInfo
  return {
    name,
    info,
    baseUrl: info.baseUrl.replace(/\/$/, ''),
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
