// Readiness of a service process on PostgreSQL while the database goes away and comes back:
// `/readyz` turns 503 within 5 s of PostgreSQL stopping and 200 again within 10 s of it starting,
// by itself; `/livez` answers 200 throughout; both answer small JSON bodies, fast.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type Deployment,
  type Instance,
  printLogsOnFailure,
  SETUP_TIMEOUT_MS,
  sleep,
  startDeployment,
} from '../instances/instances.ts'
import { probe, rows, scrape } from './scrape.ts'

/** How often the probes ask (a load balancer asks every few seconds; this is finer). */
const EVERY_MS = 100

let deployment: Deployment
let service: Instance

beforeAll(async () => {
  deployment = await startDeployment(1, { args: ['--admin-port', '0'] })
  service = deployment.instances[0]!
}, SETUP_TIMEOUT_MS)

printLogsOnFailure(() => deployment)

afterAll(async () => {
  await deployment?.close()
}, 60_000)

/** Polls `/readyz` until it answers `status`; returns the milliseconds it took, or fails after `withinMs`. */
async function readyzBecomes(status: number, withinMs: number, livez: number[]): Promise<number> {
  const started = performance.now()
  while (performance.now() - started < withinMs) {
    // A generous client timeout: the machine running the tests may be busy; the service's own
    // time is checked from its metrics.
    const [ready, live] = await Promise.all([
      probe(service.baseUrl, '/readyz', 5_000),
      probe(service.baseUrl, '/livez', 5_000),
    ])
    livez.push(live.status)
    if (ready.status === status) return performance.now() - started
    await sleep(EVERY_MS)
  }
  throw new Error(`/readyz did not answer ${status} within ${withinMs} ms`)
}

describe('readiness', { timeout: 120_000 }, () => {
  it('follows PostgreSQL going down and coming back, while /livez stays 200', async () => {
    const ready = await probe(service.baseUrl, '/readyz')
    expect(ready).toMatchObject({
      status: 200,
      body: {
        ready: true,
        checks: { database: true, migrations: true, crypto: true, serving: true, masterKey: true },
      },
    })
    expect(await probe(service.baseUrl, '/livez')).toMatchObject({ status: 200, body: { live: true } })

    const livez: number[] = []
    await deployment.cluster.stop()
    const downMs = await readyzBecomes(503, 5_000, livez)
    const down = await probe(service.baseUrl, '/readyz')
    expect(down).toMatchObject({
      status: 503,
      body: { ready: false, checks: { database: false, serving: true } },
    })
    // A probe of a database that is down answers without waiting on it.
    expect(down.ms).toBeLessThan(1_500)

    await deployment.cluster.start()
    const upMs = await readyzBecomes(200, 10_000, livez)
    expect(livez.every((status) => status === 200)).toBe(true)
    console.log(
      `/readyz: 503 ${Math.round(downMs)} ms after PostgreSQL stopped, 200 ${Math.round(upMs)} ms after it started`,
    )

    // No probe the service answered (up, down, back) waited on the database, by its own histogram:
    // each took under 0.5 s, where a look it waited for could take up to its 1 s timeout (a 50 ms
    // bound once failed for one probe of 35 on a loaded machine: a timed test, not a wait).
    const adminUrl = (service.info as typeof service.info & { adminUrl: string }).adminUrl
    const samples = await scrape(adminUrl)
    const count = rows(samples, 'latchkey_http_request_duration_seconds_count', { family: 'health' })['']!
    const fast = rows(samples, 'latchkey_http_request_duration_seconds_bucket', {
      family: 'health',
      le: '0.5',
    })['']
    expect(count).toBe(livez.length * 2 + 3)
    expect(fast).toBe(count)
  })
})
