import type { JobHandler } from '../kernel/JobQueue.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { Transaction } from '../kernel/store/Store.ts'
import { isOn, needsResume, QUEUE_PAGE, resumedFromIn, withState } from './deliver.ts'
import { DELIVER_JOB, jobIdOf, RESUME_JOB, resumeJobIdOf } from './recordEvent.ts'

/**
 * Resuming an endpoint (`update_webhook_endpoint` `isActive: true`, after its tenant turned it off
 * or the service paused it). Turning it off or pausing it writes nothing per delivery: its
 * deliveries wait as they are, and the senders read the endpoint before each try. So the resume's
 * transaction does a few writes whatever the backlog (`resumeEndpoint`): the endpoint, its resume
 * job and its head's job (the one sender, which sends the rest after it, in order). The rest is
 * the resume job's, a page of the queue a transaction, head first (`resumeHandler`): it restarts
 * the retry window of every delivery that waited (`retryFrom`: the time off does not count) and
 * makes a delivery a version before this one stored `paused` pending again. A sender that meets a
 * delivery the job has not reached yet counts its window from the resume (deliver.ts
 * `expireIfStale`) and stops at a stored `paused` one (nothing goes out past it); the job's last
 * page starts the sender again.
 */
export interface ResumePayload {
  endpointId: string
  /** When it was resumed: the waiting deliveries' retry window runs from here. */
  from: number
  /** The queue key of the last delivery resumed by a run before (its next run goes on after it). */
  after?: string
}

/** Longest a run of the resume job pages before it hands on to its next run (its cursor saved). */
const RUN_BUDGET_MS = 5000

/**
 * How long a run that handed on leaves its job before it is due again: the other jobs due
 * meanwhile (another endpoint's resume, a sign-in code's delivery) go first, not a run put back
 * due at once.
 */
export const RESUME_AGAIN_MS = 1000

/**
 * Most resume runs at once in a process (`JobHandler.maxRunning`). A tenant makes as many as it
 * has endpoints (one a resume, and one still paging for a resume replaced): capped, with the
 * senders' `WEBHOOK_SENDERS`, below the queue's slots, so the sign-in codes' deliveries and the
 * other jobs always find one.
 */
export const RESUME_RUNS = 1

/**
 * In the resume's transaction (`tx`): the endpoint's resume job, and its head's own job (put again,
 * due now: a head in back-off goes at once). A constant number of writes, whatever waits.
 */
export async function resumeEndpoint(runtime: Runtime, tx: Transaction, endpointId: string): Promise<void> {
  const payload: ResumePayload = { endpointId, from: runtime.now() }
  await runtime.jobs.enqueue(tx, RESUME_JOB, payload, { id: resumeJobIdOf(endpointId) })
  await enqueueHead(runtime, tx, endpointId)
}

/** Puts the head's own job again (due now) when the head is pending: the endpoint's one sender. */
export async function enqueueHead(runtime: Runtime, tx: Transaction, endpointId: string): Promise<void> {
  const [head] = await tx.pageBy('webhookDeliveries', {
    field: 'waitingFor',
    value: endpointId,
    by: 'queueKey',
    limit: 1,
  })
  if (head?.state === 'pending')
    await runtime.jobs.enqueue(tx, DELIVER_JOB, { deliveryId: head.id }, { id: jobIdOf(head.id) })
}

/**
 * The `webhooks.resume` job: reads the endpoint's waiting deliveries a page at a time (the queue's
 * index, head first) and writes those that need it in one transaction a page (a few hundred rows
 * at most). A page that made a stored `paused` delivery pending puts the head's job again in its
 * transaction (the sender stopped there, or looks again once it is done; else the resume's own
 * sender sends). A run that has paged
 * for `RUN_BUDGET_MS` saves its cursor by putting its job again (in its last page's transaction)
 * and ends; a run that dies between pages is run again from the last cursor and skips what is
 * done (every write is idempotent). Turned off again (or deleted): it ends, and the next resume
 * starts it over.
 */
export function resumeHandler(runtime: Runtime): JobHandler<ResumePayload> {
  return {
    maxAttempts: Number.MAX_SAFE_INTEGER,
    maxRunning: RESUME_RUNS,
    timeoutMs: RUN_BUDGET_MS + 60_000,
    async run(payload, context) {
      const { endpointId, from } = payload
      const started = Date.now()
      let after = payload.after
      for (;;) {
        const endpoint = await runtime.store.get('webhookEndpoints', endpointId)
        if (!endpoint || !isOn(endpoint)) return
        const page = await runtime.store.pageBy('webhookDeliveries', {
          field: 'waitingFor',
          value: endpointId,
          by: 'queueKey',
          ...(after !== undefined ? { after } : {}),
          limit: QUEUE_PAGE,
        })
        const last = page.at(-1)?.queueKey
        const done = page.length < QUEUE_PAGE || last === undefined
        const handOn = !done && (Date.now() - started > RUN_BUDGET_MS || context.signal.aborted)
        const stillCurrent = await runtime.store.transaction(async (tx) => {
          // Replaced by a resume since (turned off and on again): that one pages from the head,
          // and this run ends before it writes anything more.
          if ((await resumedFromIn(tx, endpointId)) !== from) return false
          let revived = false
          for (const row of page) {
            // Read again: sent, redelivered or resumed since the page was read.
            if (!needsResume(row, from)) continue
            const current = await tx.get('webhookDeliveries', row.id)
            if (!current || current.waitingFor !== endpointId || !needsResume(current, from)) continue
            if (current.state === 'paused') revived = true
            await tx.put(
              'webhookDeliveries',
              withState(current, {
                state: 'pending',
                retryFrom: Math.max(current.retryFrom ?? current.createdAt, from),
                updatedAt: runtime.now(),
              }),
            )
          }
          if (revived) await enqueueHead(runtime, tx, endpointId)
          // Put again with its cursor, a little later: the jobs due meanwhile go first.
          if (handOn)
            await runtime.jobs.enqueue(
              tx,
              RESUME_JOB,
              { endpointId, from, after: last } satisfies ResumePayload,
              { id: resumeJobIdOf(endpointId), runAfter: runtime.now() + RESUME_AGAIN_MS },
            )
          return true
        })
        if (!stillCurrent || done || handOn) return
        after = last
      }
    },
  }
}
