// A rolling restart under load: two instances on one PostgreSQL, each on a fixed port (as behind
// a load balancer), a client sending 2,000 stamped activities through both; one instance is
// SIGTERMed and restarted on its port mid-run, then the other. A request refused or cut by the
// instance going away, or answered 503 while it drains, is sent again, byte for byte (same stamp),
// to the other one. Every activity is answered exactly once: replays of a body return its first
// activity, the database holds exactly 2,000 new activities, each drain exits 0, and nothing is
// answered 5xx but 503.

import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/testKeys.ts'
import { startPostgres } from '../durability/postgres.ts'
import {
  type Deployment,
  type Instance,
  printLogsOnFailure,
  SETUP_TIMEOUT_MS,
  sleep,
  startInstance,
} from '../instances/instances.ts'
import { type Prepared, RootClient, resultOf } from '../support/RootClient.ts'

const ACTIVITIES = 2_000
/** Requests in flight at once. */
const CONCURRENCY = 8
/** Answers after which the first instance is stopped; the second goes once the first is back. */
const FIRST_STOP_AFTER = 300
/** Bodies held back until the second instance is stopping, so that it drains under load too. */
const HELD_FOR_SECOND = 300

let deployment: Deployment
let ports: number[]
/** The instance serving each port now (replaced when it restarts). */
const serving: Instance[] = []
const args = (port: number) => ['--port', String(port), '--crypto-threads', '1', '--log-level', 'warn']

/** A port nothing listens on now, kept for one instance across its restarts. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

beforeAll(async () => {
  const cluster = await startPostgres()
  const masterKey = randomBytes(32).toString('hex')
  ports = [await freePort(), await freePort()]
  const started = await Promise.all(
    ports.map((port, index) =>
      startInstance(String.fromCharCode(65 + index), {
        databaseUrl: cluster.url,
        masterKey,
        args: args(port),
      }),
    ),
  )
  serving.push(...started)
  deployment = {
    cluster,
    instances: serving,
    info: started[0]!.info,
    masterKey,
    close: async () => {
      await Promise.all(serving.map((instance) => instance.stop()))
      await cluster.dispose()
    },
  }
}, SETUP_TIMEOUT_MS)

printLogsOnFailure(() => deployment)

afterAll(async () => {
  await deployment?.close()
}, 60_000)

interface Answer {
  status: number
  activityId?: string
  /** How many times the body was sent (1 when the first instance asked answered). */
  sends: number
}

describe('rolling restart under load', { timeout: 600_000 }, () => {
  it('answers every one of 2,000 stamped activities exactly once while each instance drains and restarts', async () => {
    const root = new RootClient(deployment.info)
    const { addresses } = resultOf(
      'create_wallet',
      await root.submit(serving[0]!, 'create_wallet', {
        walletName: 'rolling',
        accounts: [ETHEREUM_ACCOUNT],
      }),
    )
    const before = Number(deployment.cluster.psql('select count(*) from activities'))
    // Stamped before the run: the very same bytes go to whichever instance answers.
    const bodies: Prepared[] = Array.from({ length: ACTIVITIES }, (_, index) =>
      root.prepareActivity('sign_raw_payload', {
        signWith: addresses[0],
        payload: `0x${index.toString(16).padStart(64, '0')}`,
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      }),
    )
    const answers: Answer[] = []
    const unexpected: string[] = []
    let drained503 = 0
    let resent = 0
    let answered = 0

    /** Sends body `index`, moving to the other instance on a refusal, a cut connection or a 503. */
    const send = async (index: number) => {
      let target = index % 2
      for (let sends = 1; ; sends++) {
        try {
          const reply = await root.send(
            { baseUrl: `http://127.0.0.1:${ports[target]}` },
            bodies[index]!,
            30_000,
          )
          if (reply.status !== 503) {
            if (reply.status >= 500) unexpected.push(`${reply.status} ${JSON.stringify(reply.body)}`)
            answers[index] = { status: reply.status, activityId: reply.body?.activity?.id, sends }
            answered++
            return
          }
          drained503++
        } catch {
          // Refused or cut: the instance is going or gone.
        }
        resent++
        target = 1 - target
        // Both may be briefly away (one restarting, the other mid-drain): do not spin.
        if (sends % 2 === 0) await sleep(100)
      }
    }

    const exits: (number | null)[] = []
    /** Activities answered when each instance was signalled. */
    const signalledAt: number[] = []
    const restart = async (index: number) => {
      const instance = serving[index]!
      signalledAt.push(answered)
      exits.push(await instance.stop())
      serving[index] = await startInstance(instance.name, {
        databaseUrl: deployment.cluster.url,
        masterKey: deployment.masterKey,
        args: args(ports[index]!),
        timeoutMs: 120_000,
      })
    }
    const started = performance.now()
    let next = 0
    const clients = Array.from({ length: CONCURRENCY }, async () => {
      while (next < ACTIVITIES) {
        if (next >= ACTIVITIES - HELD_FOR_SECOND && signalledAt.length < 2) {
          await sleep(50)
          continue
        }
        await send(next++)
      }
    })
    const restarts = (async () => {
      while (answered < FIRST_STOP_AFTER) await sleep(50)
      await restart(0)
      await restart(1)
    })()
    await Promise.all([...clients, restarts])
    const seconds = (performance.now() - started) / 1000

    expect(unexpected).toEqual([])
    expect(exits).toEqual([0, 0])
    expect(signalledAt.every((count) => count < ACTIVITIES)).toBe(true)
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(ACTIVITIES)
    const ids = new Set(answers.map((answer) => answer.activityId))
    expect(ids.size).toBe(ACTIVITIES)
    // Exactly one activity per body: a resent body that had been recorded answered with its first one.
    expect(Number(deployment.cluster.psql('select count(*) from activities')) - before).toBe(ACTIVITIES)
    console.log(
      `rolling restart: ${ACTIVITIES} activities in ${seconds.toFixed(1)} s, ${resent} resent (${drained503} after a 503), instances signalled after ${signalledAt.join(' and ')} answers`,
    )
  })
})
