// PostgreSQL stopped and started under load. Two service processes, four clients doing
// create_wallet / sign_raw_payload against both for ~15 s; the database is down for ~3 s in the
// middle. While it is down, writes fail fast and clearly (503 STORAGE_UNAVAILABLE, never a 500 or
// a hang); when it is back, both processes write again by themselves; every activity answered 200
// is there afterwards.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/testKeys.ts'
import { errorOf, type Reply, RootClient, resultOf } from '../support/RootClient.ts'
import {
  type Deployment,
  type Instance,
  printLogsOnFailure,
  SETUP_TIMEOUT_MS,
  sleep,
  startDeployment,
} from './instances.ts'

const CLIENTS = 4
const LOAD_MS = 15_000
const DOWN_AT_MS = 5_000
const DOWN_FOR_MS = 3_000
/** A request that takes longer than this counts as a hang. */
const HANG_MS = 8_000
/** How soon after the database is back each process must have written again. */
const RECOVER_MS = 5_000

let deployment: Deployment
let instances: Instance[]
let root: RootClient

beforeAll(async () => {
  deployment = await startDeployment(2)
  instances = deployment.instances
  root = new RootClient(deployment.info)
}, SETUP_TIMEOUT_MS)

printLogsOnFailure(() => deployment)

afterAll(async () => {
  await deployment?.close()
}, 60_000)

interface Outcome {
  instance: Instance
  path: 'create_wallet' | 'sign_raw_payload'
  /** ms since the load started */
  sentAt: number
  answeredAt: number
  status: number
  errorCode?: string
  activityId?: string
  /** set when no HTTP answer came (refused, reset, timed out) */
  failure?: string
}

describe('PostgreSQL restarted under load', { timeout: 120_000 }, () => {
  it('writes fail fast with 503 STORAGE_UNAVAILABLE while it is down, both processes recover by themselves, nothing answered 200 is lost', async () => {
    const seed = resultOf(
      'create_wallet',
      await root.submit(instances[0]!, 'create_wallet', {
        walletName: 'signer',
        accounts: [ETHEREUM_ACCOUNT],
      }),
    )
    const signWith = seed.addresses[0] as string

    const outcomes: Outcome[] = []
    const start = performance.now()
    const elapsed = () => performance.now() - start
    let downAt = Number.NaN
    let upAt = Number.NaN

    const client = async (index: number) => {
      let round = 0
      while (elapsed() < LOAD_MS) {
        const instance = instances[(index + round) % instances.length]!
        const path = round % 2 === 0 ? 'sign_raw_payload' : 'create_wallet'
        round++
        const parameters =
          path === 'create_wallet'
            ? { walletName: `load ${index}-${round}`, accounts: [ETHEREUM_ACCOUNT] }
            : {
                signWith,
                payload: `${index.toString(16).padStart(2, '0')}${round.toString(16).padStart(62, '0')}`,
                encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
                hashFunction: 'HASH_FUNCTION_NO_OP',
              }
        const sentAt = elapsed()
        let outcome: Outcome
        try {
          const reply: Reply = await root.submit(instance, path, parameters, HANG_MS)
          outcome = {
            instance,
            path,
            sentAt,
            answeredAt: elapsed(),
            status: reply.status,
            errorCode: errorOf(reply).errorCode,
            activityId: reply.status === 200 ? reply.body.activity.id : undefined,
          }
        } catch (error) {
          const cause = (error as { cause?: { code?: string } }).cause?.code
          outcome = {
            instance,
            path,
            sentAt,
            answeredAt: elapsed(),
            status: 0,
            failure: `${String(error)}${cause ? ` (${cause})` : ''}`,
          }
        }
        outcomes.push(outcome)
        // Failing fast must not turn into a busy loop against a dead database.
        if (outcome.status !== 200) await sleep(100)
      }
    }

    const outage = (async () => {
      await sleep(DOWN_AT_MS)
      await deployment.cluster.stop()
      downAt = elapsed()
      await sleep(DOWN_FOR_MS)
      await deployment.cluster.start()
      upAt = elapsed()
    })()
    await Promise.all([...Array.from({ length: CLIENTS }, (_, i) => client(i)), outage])

    const summary = (list: Outcome[]) =>
      list.map(
        (o) =>
          `${o.instance.name} ${o.path} @${Math.round(o.sentAt)}ms ${o.status} ${o.errorCode ?? o.failure ?? ''}`,
      )
    // Both processes lived through it (a database going away must not take the service down).
    expect(
      instances.map((instance) => ({
        instance: instance.name,
        exit: instance.child.signalCode ?? instance.child.exitCode,
      })),
    ).toEqual(instances.map((instance) => ({ instance: instance.name, exit: null })))
    // Every request got an HTTP answer in time: no hang, no dropped connection.
    expect(summary(outcomes.filter((o) => o.status === 0))).toEqual([])
    // Nothing but 200 and 503 STORAGE_UNAVAILABLE: never a 500.
    expect(
      summary(
        outcomes.filter(
          (o) => o.status !== 200 && !(o.status === 503 && o.errorCode === 'STORAGE_UNAVAILABLE'),
        ),
      ),
    ).toEqual([])
    // The outage was seen: requests sent while the database was down failed, and fast.
    const duringOutage = outcomes.filter((o) => o.sentAt > downAt + 200 && o.answeredAt < upAt)
    expect(duringOutage.length).toBeGreaterThan(0)
    for (const o of duringOutage) expect(o.status).toBe(503)
    const slowest = Math.max(...outcomes.filter((o) => o.status === 503).map((o) => o.answeredAt - o.sentAt))
    expect(slowest).toBeLessThan(HANG_MS)
    // Both processes served writes before the outage and again within RECOVER_MS after it.
    const recovery: string[] = []
    for (const instance of instances) {
      const ok = outcomes.filter((o) => o.instance === instance && o.status === 200)
      expect(ok.some((o) => o.answeredAt < downAt)).toBe(true)
      const firstAfter = Math.min(...ok.filter((o) => o.sentAt >= upAt).map((o) => o.answeredAt))
      recovery.push(`${instance.name} ${Math.round(firstAfter - upAt)} ms`)
      expect({ instance: instance.name, recoveredWithinMs: firstAfter - upAt <= RECOVER_MS }).toEqual({
        instance: instance.name,
        recoveredWithinMs: true,
      })
      // And kept serving to the end of the load.
      const lateFailures = outcomes.filter(
        (o) => o.instance === instance && o.sentAt > upAt + RECOVER_MS && o.status !== 200,
      )
      expect(summary(lateFailures)).toEqual([])
    }
    // Every activity acknowledged (before, during or after) is readable afterwards, from either process.
    const acknowledged = outcomes.filter((o) => o.status === 200)
    expect(acknowledged.length).toBeGreaterThan(CLIENTS * 4)
    const missing: string[] = []
    for (let from = 0; from < acknowledged.length; from += 8)
      await Promise.all(
        acknowledged.slice(from, from + 8).map(async (o, offset) => {
          const reply = await root.query(instances[(from + offset) % instances.length]!, 'get_activity', {
            activityId: o.activityId,
          })
          if (reply.status !== 200 || reply.body.activity?.status !== 'ACTIVITY_STATUS_COMPLETED')
            missing.push(
              `${o.path} ${o.activityId} acknowledged @${Math.round(o.answeredAt)}ms: ${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`,
            )
        }),
      )
    expect(missing).toEqual([])
    console.log(
      `database restart: ${outcomes.length} requests, ${acknowledged.length} acknowledged, ` +
        `${outcomes.filter((o) => o.status === 503).length} × 503 (slowest ${Math.round(slowest)} ms), ` +
        `down ${Math.round(downAt)}–${Math.round(upAt)} ms, first 200 after it is back: ${recovery.join(', ')}`,
    )
  })
})
