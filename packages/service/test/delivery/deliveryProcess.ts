// Starts test/delivery/deliveryService.ts as a child process (bundled, see support/cliEntry.ts) and talks to it over
// HTTP: otp_init and otp_verify through its auth proxy, the events it logged, kill -9.
import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import type { DeliveryOptions } from '../../src/delivery/DeliveryOptions.ts'
import type { JobQueueOptions } from '../../src/kernel/JobQueue.ts'
import { scriptCommand } from '../support/cliEntry.ts'
import { type DevInfo, root } from '../support/serviceProcess.ts'

export interface DeliveryServiceConfig {
  masterKey: string
  databaseUrl?: string
  dataDir?: string
  delivery: DeliveryOptions
  jobs?: JobQueueOptions
}

export interface DeliveryProcess {
  baseUrl: string
  /** The dev credentials it printed (for `RootClient`). */
  info: DevInfo
  /** Every `event <name> <json>` line so far. */
  events(): { name: string; data: Record<string, unknown> }[]
  stderr(): string
  /** kill -9 and wait for the exit. */
  crash(): Promise<void>
  /** SIGTERM and wait. */
  stop(): Promise<void>
  /** A call to its auth proxy. */
  proxy(path: string, body: object): Promise<{ status: number; body: Record<string, unknown> }>
}

const running = new Set<ChildProcess>()

/** SIGKILLs every process started here and not stopped (afterEach). */
export function killDeliveryProcesses(): void {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  running.clear()
}

export async function startDeliveryService(config: DeliveryServiceConfig): Promise<DeliveryProcess> {
  const child = spawn(process.execPath, scriptCommand('deliveryService'), {
    cwd: root,
    env: { ...process.env, LATCHKEY_TEST_SERVICE: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child)
      resolve()
    }),
  )
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the service printed no line within 60 s\n${stderr}`)),
      60_000,
    )
    createInterface({ input: child.stdout! }).once('line', (first) => {
      clearTimeout(timer)
      resolve(first)
    })
    void exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`the service exited before it was ready\n${stderr}`))
    })
  })
  child.stdout!.resume()
  const info = JSON.parse(line) as DevInfo
  return {
    baseUrl: info.baseUrl,
    info,
    stderr: () => stderr,
    events: () =>
      stderr
        .split('\n')
        .filter((l) => l.startsWith('event '))
        .map((l) => {
          const [, name, ...json] = l.split(' ')
          return { name: name!, data: JSON.parse(json.join(' ')) as Record<string, unknown> }
        }),
    async crash() {
      child.kill('SIGKILL')
      await exited
    },
    async stop() {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    },
    async proxy(path, body) {
      const response = await fetch(`${info.baseUrl}/v1/${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', [PROXY_CONFIG_HEADER]: info.authProxyConfigId ?? '' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      })
      return { status: response.status, body: (await response.json()) as Record<string, unknown> }
    },
  }
}
