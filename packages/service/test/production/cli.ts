// `latchkey-service <command>` as a child process (the bundled CLI, see support/cliEntry.ts, from the repository's root), for
// the production tests: run to its exit, or started until it prints its first line.
import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { cliCommand } from '../support/cliEntry.ts'
import { root } from '../support/serviceProcess.ts'

const running = new Set<ChildProcess>()

/** SIGKILLs whatever a test started and did not stop. */
export function killAll(): void {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  running.clear()
}

export interface Run {
  code: number | null
  /** The signal that ended it, if one did (then `code` is null). */
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

function spawnCli(args: string[], env: Record<string, string | undefined>): ChildProcess {
  const child = spawn(process.execPath, [...cliCommand(), ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  child.once('exit', () => running.delete(child))
  return child
}

/** Runs a command to its exit. */
export async function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  const child = spawnCli(args, env)
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (c, s) => resolve([c, s])),
  )
  return { code, signal, stdout, stderr }
}

export interface Started {
  /** Its first stdout line, parsed. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read the ready line's fields
  info: any
  /** Everything it wrote so far. */
  output(): { stdout: string; stderr: string }
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>
}

/** Starts a long-running command and resolves once it printed its first line (`--json`). */
export async function startCli(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<Started> {
  const child = spawnCli(args, env)
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve)
    void exited.then((code) => reject(new Error(`exited (${code}) before it was ready\n${stderr}`)))
  })
  return {
    info: JSON.parse(line),
    output: () => ({ stdout, stderr }),
    async stop() {
      child.kill('SIGTERM')
      return exited
    },
  }
}
