// A drain under load cuts nothing. 300 signings are in flight (20 of them on kept-alive
// connections that served a request before) when the service is signalled, in both ways a service
// is signalled: SIGTERM to the server process alone (a container runtime), and SIGTERM to its whole
// process group (a terminal's Ctrl-C, systemd's KillMode=control-group) of `npm run service`, where
// npm forwards the signal it got: the service gets it twice. Every one of the 300 is answered 200
// or 503 (none reset), requests sent after the grace period get 503, `/readyz` turns 503 at once,
// and the process exits 0.
import { type ChildProcess, spawn } from 'node:child_process'
import { Agent, request } from 'node:http'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/testKeys.ts'
import { removeDir, tempDir } from '../durability/tempDir.ts'
import { type Prepared, RootClient, resultOf } from '../support/RootClient.ts'
import { type DevInfo, killAll, root, startService } from '../support/serviceProcess.ts'

const IN_FLIGHT = 300
/** Of which sent on connections that already served a request (kept alive). */
const KEPT_ALIVE = 20
/** Short, so that the signings outlast it and requests after it meet the refusal. */
const GRACE_SECONDS = 0.3
/** How often a request comes on a new connection once the signal is sent, and the most sent. */
const LATE_EVERY_MS = 20
const LATE_MOST = 500
const FLAGS = [
  '--crypto-threads',
  '1',
  '--log-format',
  'json',
  '--log-level',
  'info',
  '--drain-grace-seconds',
  String(GRACE_SECONDS),
]

const dirs: string[] = []
const groups: ChildProcess[] = []
afterEach(() => {
  killAll()
  for (const group of groups.splice(0))
    try {
      process.kill(-group.pid!, 'SIGKILL')
    } catch {}
})
afterAll(() => {
  for (const dir of dirs) removeDir(dir)
})

type Outcome = { status: number; connection: string | undefined } | { error: string }

/** One request over `agent` (kept-alive connections) or a new connection; never throws. */
function send(baseUrl: string, prepared: Prepared, agent: Agent | false): Promise<Outcome> {
  const url = new URL(prepared.path, baseUrl)
  return new Promise((resolve) => {
    const outgoing = request(
      url,
      { method: 'POST', agent, headers: { ...prepared.headers, 'Content-Type': 'application/json' } },
      (incoming) => {
        incoming.resume()
        incoming.on('end', () =>
          resolve({ status: incoming.statusCode!, connection: incoming.headers.connection }),
        )
        incoming.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ error: error.code ?? error.message }),
        )
      },
    )
    outgoing.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }))
    outgoing.setTimeout(60_000, () => outgoing.destroy(new Error('timeout')))
    outgoing.end(prepared.body)
  })
}

/** `GET /readyz`'s status, or the error. */
async function readiness(baseUrl: string): Promise<number | string> {
  try {
    return (await fetch(`${baseUrl}/readyz`, { headers: { Connection: 'close' } })).status
  } catch (error) {
    return String((error as Error).cause ?? error)
  }
}

/**
 * Loads the service at `info` with 300 signings, calls `signal` once they are on the wire, and
 * says how every request ended; resolves once the service has exited (`exited`).
 */
async function drainUnderLoad(info: DevInfo, signal: () => void, exited: Promise<number | null>) {
  const baseUrl = info.baseUrl.replace(/\/$/, '')
  const client = new RootClient(info)
  const { addresses } = resultOf(
    'create_wallet',
    await client.submit({ baseUrl }, 'create_wallet', { walletName: 'drain', accounts: [ETHEREUM_ACCOUNT] }),
  )
  const sign = (index: number) =>
    client.prepareActivity('sign_raw_payload', {
      signWith: addresses[0],
      payload: `0x${index.toString(16).padStart(64, '0')}`,
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    })
  // Kept-alive connections, each having served one request, idle when the load begins.
  const keepAlive = new Agent({ keepAlive: true, maxSockets: KEPT_ALIVE })
  const warm = await Promise.all(
    Array.from({ length: KEPT_ALIVE }, (_, i) => send(baseUrl, sign(1_000_000 + i), keepAlive)),
  )
  expect(warm.map((outcome) => ('status' in outcome ? outcome.status : outcome.error))).toEqual(
    Array(KEPT_ALIVE).fill(200),
  )
  const bodies = Array.from({ length: IN_FLIGHT }, (_, i) => sign(i))
  const load = bodies.map((body, i) => send(baseUrl, body, i < KEPT_ALIVE ? keepAlive : false))
  // Every request is on the wire (a moment for the connections to open), then the signal.
  await new Promise((resolve) => setTimeout(resolve, 50))
  const signalledAt = performance.now()
  signal()
  // `/readyz` turns 503 as soon as the signal is handled, for the whole grace period. The grace
  // counts from when the service handles the signal, not from when it was sent: under 300
  // signings on a busy machine (CI) the signal's turn on the event loop came more than the grace
  // (0.3 s) after it was sent, and a wait bounded by the grace from sending saw only 200s. Asked
  // until it answers otherwise, it must answer 503 before the listener closes.
  let readyAfterSignal = await readiness(baseUrl)
  while (readyAfterSignal === 200 && performance.now() - signalledAt < 30_000)
    readyAfterSignal = await readiness(baseUrl)
  // Requests keep coming on new connections, one every LATE_EVERY_MS whether or not the ones
  // before were answered (a load balancer's traffic does not wait either): served during the
  // grace, then 503 until the drain ends; the stream stops once three were answered 503, or a
  // connection failed. Sent one after the other's answer instead, a stream whose last 200 came
  // after the signings taken were done left the listener a quiet moment, and it closed (rightly)
  // before any 503 could be seen.
  const late: Outcome[] = []
  const answered: Promise<void>[] = []
  const refusals = () => late.filter((outcome) => 'status' in outcome && outcome.status === 503).length
  for (let n = 0; n < LATE_MOST && refusals() < 3 && !late.some((o) => 'error' in o); n++) {
    answered.push(
      send(baseUrl, sign(2_000_000 + n), false).then((outcome) => {
        late[n] = outcome
      }),
    )
    await new Promise((resolve) => setTimeout(resolve, LATE_EVERY_MS))
  }
  await Promise.all(answered)
  const outcomes = await Promise.all(load)
  const code = await exited
  keepAlive.destroy()
  const seconds = (performance.now() - signalledAt) / 1000
  return { outcomes, late, readyAfterSignal, code, seconds }
}

/**
 * The late stream's answers in the order sent, runs of one status counted once. The stream may
 * meet the drain's end: once the signings taken are answered the listener closes, so a request
 * after that is refused a connection (`ECONNREFUSED`), or, when its connection was opened in the
 * moment the listener closed (queued by the kernel, or accepted and still without a request),
 * reset (`ECONNRESET`) with nothing done. Such an outcome after a 503 (the service past its grace)
 * is not an answer and is left out; a refusal or reset before any 503 is kept, and fails the test.
 */
function lateAnswers(outcomes: Outcome[]): (number | string)[] {
  const answers = outcomes.map((outcome) => ('status' in outcome ? outcome.status : outcome.error))
  const first503 = answers.indexOf(503)
  return answers
    .filter(
      (answer, i) =>
        !(first503 >= 0 && i > first503 && (answer === 'ECONNREFUSED' || answer === 'ECONNRESET')),
    )
    .filter((answer, i, kept) => answer !== kept[i - 1] || answer === 503)
}

function tally(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const outcome of outcomes) {
    const key = 'status' in outcome ? String(outcome.status) : outcome.error
    counts[key] = (counts[key] ?? 0) + 1
  }
  return counts
}

describe('a drain under 300 in-flight signings', { timeout: 180_000 }, () => {
  it('SIGTERM to the server process alone: 0 cut, every answer 200 or 503, later requests 503, exit 0', async () => {
    const dir = tempDir('drain-alone')
    dirs.push(dir)
    const service = await startService({
      name: 'drain-alone',
      args: [...FLAGS, '--data-dir', join(dir, 'data')],
    })
    const exited = service.exited.then(({ code }) => code)
    const result = await drainUnderLoad(service.info, () => service.child.kill('SIGTERM'), exited)
    const counts = tally(result.outcomes)
    console.log(
      `drain, server alone: ${JSON.stringify(counts)} in ${result.seconds.toFixed(1)} s; late ${JSON.stringify(tally(result.late))}`,
    )
    expect(result.code, service.stderr()).toBe(0)
    expect(Object.keys(counts).filter((key) => key !== '200' && key !== '503')).toEqual([])
    expect(counts['200']).toBeGreaterThan(0)
    expect(result.readyAfterSignal).toBe(503)
    expect(lateAnswers(result.late)).toEqual(expect.arrayContaining([503, 503, 503]))
    expect(lateAnswers(result.late).filter((answer) => answer !== 200 && answer !== 503)).toEqual([])
  })

  it('SIGTERM to the process group of `npm run service` (npm forwards it: two signals): 0 cut, later requests 503, exit 0', async () => {
    const dir = tempDir('drain-group')
    dirs.push(dir)
    // npm runs the script in a child process and forwards the signals it gets to it.
    const group = spawn(
      'npm',
      ['run', '-s', 'service', '--', '--port', '0', '--json', ...FLAGS, '--data-dir', join(dir, 'data')],
      {
        cwd: root,
        env: { ...process.env, NODE_ENV: 'development' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    )
    groups.push(group)
    let stderr = ''
    group.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    // npm ends itself with the signal it got once its script exited.
    const exited = new Promise<number | null>((resolve) =>
      // 'close': its output is closed too, so the service, which shares it, is gone as well.
      group.once('close', (code, signal) => resolve(signal === 'SIGTERM' ? 0 : code)),
    )
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: group.stdout! }).once('line', resolve)
      void exited.then((code) => reject(new Error(`exited (${code}) before it was ready\n${stderr}`)))
    })
    group.stdout!.resume()
    const info = JSON.parse(line) as DevInfo
    const result = await drainUnderLoad(info, () => process.kill(-group.pid!, 'SIGTERM'), exited)
    const counts = tally(result.outcomes)
    console.log(
      `drain, process group: ${JSON.stringify(counts)} in ${result.seconds.toFixed(1)} s; late ${JSON.stringify(tally(result.late))}`,
    )
    expect(result.code, stderr).toBe(0)
    // The service itself drained to its end, once (the second signal counted with the first).
    const drains = stderr.split('\n').filter((line) => line.includes('"event":"server.drained"'))
    expect(drains, stderr).toHaveLength(1)
    expect(JSON.parse(drains[0]!).data.cut).toBe(0)
    expect(stderr).not.toContain('second signal')
    expect(Object.keys(counts).filter((key) => key !== '200' && key !== '503')).toEqual([])
    expect(counts['200']).toBeGreaterThan(0)
    expect(result.readyAfterSignal).toBe(503)
    expect(lateAnswers(result.late)).toEqual(expect.arrayContaining([503, 503, 503]))
    expect(lateAnswers(result.late).filter((answer) => answer !== 200 && answer !== 503)).toEqual([])
  })
})
