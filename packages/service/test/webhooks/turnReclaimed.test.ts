// An endpoint's turn job put back by its own run (passTurn: its tries are done, the endpoint's
// queue is not) and claimed again by the same worker before that run ended: both claims had the
// same worker and the same attempts (1: enqueue puts a job afresh), so the first run's end, when it
// came first, deleted the job the second run held. The second run had found the endpoint still
// held (by the first, before its release) and failed 'busy' to be tried again; that retry was lost
// and the rest of the endpoint's queue had no job at all (deliveries 5 and 6 of 6 never sent). Each
// claim now has its own id (JobQueue), and each run's end is its own claim's.
import { describe, expect, it } from 'vitest'
import { turnJobIdOf } from '../../src/webhooks/deliver.ts'
import { DELIVER_JOB } from '../../src/webhooks/recordEvent.ts'
import { setUp as inProcess } from './inProcessReceiver.ts'

/** A harness with an in-process receiver, and `settleAll`: the clock moved on (past any backoff) and due jobs run, until `want` are sent. */
async function setUp() {
  const { h, sent, endpoint, flush, requests } = await inProcess()
  const settleAll = async (want: number) => {
    for (let i = 0; i < 8 && sent.length < want; i++) {
      h.clock.advance(10 * 60_000)
      await flush()
    }
  }
  return { h, receiver: { received: sent, requests }, endpoint, flush, settleAll }
}

type Outcome = { ok: true } | { ok: false; reason: string }

describe("an endpoint's turn put back by its own run and claimed again by the same worker", () => {
  for (const racing of [true, false])
    it(`every delivery is sent when the first run finishes ${racing ? 'before' : 'after'} the second`, async () => {
      const { h, receiver, endpoint, flush, settleAll } = await setUp()
      const { endpointId } = await endpoint()
      const { runtime } = h.service
      const store = runtime.store
      const turn = turnJobIdOf(endpointId)
      // Six deliveries wait; their job found the endpoint held (by another run) and left them.
      const holding = (await store.get('webhookEndpoints', endpointId))!
      await store.transaction((tx) =>
        tx.put('webhookEndpoints', {
          ...holding,
          sendingBy: 'another/run',
          sendingUntil: h.clock.now() + 60_000,
        }),
      )
      for (let i = 0; i < 6; i++) {
        h.clock.advance(1)
        await h.submit('create_wallet', { walletName: `W${i}`, accounts: [] })
      }
      await flush()
      expect(receiver.requests()).toBe(0)
      const { sendingBy: _, sendingUntil: __, ...free } = (await store.get('webhookEndpoints', endpointId))!
      await store.transaction((tx) => tx.put('webhookEndpoints', free))
      const [first] = await store.pageBy('webhookDeliveries', {
        field: 'waitingFor',
        value: endpointId,
        by: 'queueKey',
        limit: 1,
      })

      // Hooks: right after the run of the turn (R1) puts the turn back (its 4 tries done, it still
      // holds the lease), the same worker claims the turn again (R2, as a poll tick or a finished
      // run's schedule(0) would). R2 finds the lease held and throws 'busy'. The order in which the
      // two finish is the race: R1 first (the case that lost R2's retry) or R2 first.
      const jobs = runtime.jobs as unknown as {
        enqueue: typeof runtime.jobs.enqueue
        finish: (job: { id: string; attempts: number }, outcome: Outcome) => Promise<void>
      }
      const enqueue = jobs.enqueue.bind(jobs)
      let armed = false
      let turnPut = false
      jobs.enqueue = (async (tx, kind, payload, options) => {
        if (armed && options?.id === turn) turnPut = true
        return enqueue(tx, kind, payload, options)
      }) as typeof runtime.jobs.enqueue
      let r2Finishing!: () => void
      const r2AtFinish = new Promise<void>((done) => (r2Finishing = done))
      let r1Finished!: () => void
      const r1Done = new Promise<void>((done) => (r1Finished = done))
      let r2Outcome: Outcome | undefined
      let reclaimed = false
      const finish = jobs.finish.bind(jobs)
      jobs.finish = async (job, outcome) => {
        if (job.id === turn && reclaimed && !r2Outcome && !outcome.ok) {
          // R2's finish (R1 waits in the hook below until R2 gets here).
          r2Outcome = outcome
          r2Finishing()
          if (racing) await r1Done
          return finish(job, outcome)
        }
        await finish(job, outcome)
        if (job.id === turn && outcome.ok) r1Finished()
      }
      const transaction = store.transaction.bind(store)
      store.transaction = (async (fn: never) => {
        const result = await transaction(fn)
        if (turnPut) {
          turnPut = false
          armed = false
          reclaimed = true
          await runtime.jobs.runDue()
          await r2AtFinish
        }
        return result
      }) as typeof store.transaction

      // The turn (R1): sends 4, its turn is over, it puts the turn back.
      await store.transaction((tx) =>
        runtime.jobs.enqueue(
          tx,
          DELIVER_JOB,
          { deliveryId: first!.id, endpointId },
          { id: turn, runAfter: h.clock.now() },
        ),
      )
      armed = true
      await flush()
      await settleAll(6)
      expect(r2Outcome).toEqual(expect.objectContaining({ ok: false, reason: 'busy' }))
      expect(receiver.received.map((body) => body.sequence)).toEqual([1, 2, 3, 4, 5, 6])
      // (On failure: deliveries 5 and 6 are pending and no job will ever send them.)
      const pending = (await store.findBy('webhookDeliveries', 'waitingFor', endpointId)).filter(
        (row) => row.state === 'pending',
      )
      expect(pending).toEqual([])
    })
})
