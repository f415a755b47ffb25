import { WEBHOOK_HEADERS } from '@latchkey/protocol'
import { recordAppEvent } from '../kernel/appEvents.ts'
import { type JobContext, JobError, type JobHandler } from '../kernel/JobQueue.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { WebhookDeliveryRow, WebhookEndpointRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Store.ts'
import {
  type AddressPolicy,
  dependsOnOrganization,
  policyForOrganization,
  refuseAddress,
  refuseUrl,
} from './addressPolicy.ts'
import { BACKLOG_FULL, capBacklog, isDropped, MAX_WAITING_DEFAULT } from './capBacklog.ts'
import {
  bodyOf,
  DELIVER_JOB,
  deliveryIdOf,
  jobIdOf,
  listKeyOf,
  numberedBody,
  queueKeyOf,
  resumeJobIdOf,
  UNNUMBERED_AFTER,
  WAITING,
} from './recordEvent.ts'
import { signDelivery } from './signingKeys.ts'
import {
  WEBHOOK_DEFAULTS,
  WebhookRefusedError,
  type WebhooksOptions,
  type WebhookTransport,
} from './WebhooksOptions.ts'

export type DeliverySettings = typeof WEBHOOK_DEFAULTS & {
  policy: AddressPolicy
  transport: WebhookTransport
  /** Called after each run that sent (the retention job's next run, enqueued once per interval). */
  afterRun?: () => Promise<void>
}

/** How one try ended, as counted (`webhooks.delivery` events, the metric's `outcome` label). */
export type DeliveryOutcome = 'delivered' | 'http_error' | 'network' | 'timeout' | 'refused' | 'expired'

/** Longest a job spends sending an endpoint's queue before its turn is over (`passTurn`). */
const DRAIN_BUDGET_MS = 20_000

/**
 * Most tries one run of a sender makes (`TURN_TRIES`, whatever their receiver takes to answer)
 * before its turn is over: the endpoint's turn is put back at the end of the job queue
 * (`passTurn`), so endpoints (and tenants) take turns at the 4 senders a few tries at a time, and a
 * delivery waits behind at most a turn of each sender, not a whole drain of another tenant's queue.
 */
export const TURN_TRIES = 4

/** The job that holds an endpoint's turn once a run's turn is over (one a endpoint: put back, it moves to the end). */
export const turnJobIdOf = (endpointId: string) => `job.turn.${endpointId}`

/** What one run of a sender has spent of its turn (tries made, and since when). */
interface Turn {
  tries: number
  started: number
}

const turnOver = (turn: Turn): boolean =>
  turn.tries >= TURN_TRIES || Date.now() - turn.started > DRAIN_BUDGET_MS

/**
 * Requests in flight from which the service counts as busy (its CPU is what the requests wait
 * for). While it is, a delivery waits until it is `busyDelayMs` old (checked every `stepMs`), so a
 * burst of requests is answered before its webhooks are sent, and under a load that lasts each
 * delivery still goes out that late at most, which keeps the backlog bounded.
 */
const BUSY = { requests: 32, stepMs: 50, quietMs: 1000 }

/** When each runtime was last seen busy. */
const lastBusy = new WeakMap<Runtime, number>()

/**
 * Busy now, or seen busy within the last `quietMs` (checked at each tick and each wait): a load's
 * short dips (a batch of clients done, the next not begun) are not quiet enough for a fan-out.
 */
function isBusy(runtime: Runtime): boolean {
  const now = Date.now()
  if (runtime.store.requestsInFlight() >= BUSY.requests) {
    lastBusy.set(runtime, now)
    return true
  }
  return now - (lastBusy.get(runtime) ?? Number.NEGATIVE_INFINITY) < BUSY.quietMs
}

/**
 * Whether something recorded at `since` still gives way to requests: the service is busy and it is
 * younger than `busyDelayMs` (on the runtime's clock).
 */
const heldBack = (runtime: Runtime, since: number, busyDelayMs: number): boolean =>
  isBusy(runtime) && runtime.now() - since < busyDelayMs

/**
 * Waits while the delivery or event recorded at `since` is `heldBack` (never longer than
 * `busyDelayMs` in real time either, so a clock that stands still cannot hold it).
 */
async function yieldToRequests(
  runtime: Runtime,
  input: { since: number; settings: DeliverySettings; signal: AbortSignal },
): Promise<void> {
  const { since, settings, signal } = input
  const started = Date.now()
  while (
    heldBack(runtime, since, settings.busyDelayMs) &&
    Date.now() - started < settings.busyDelayMs &&
    !signal.aborted
  )
    await new Promise((resolve) => setTimeout(resolve, BUSY.stepMs))
}

/** How long a delivery may wait for a busy service (0 to 10 s: a job's run stays within its lease). */
export const busyDelayOf = (options: WebhooksOptions): number =>
  Math.min(Math.max(options.busyDelayMs ?? WEBHOOK_DEFAULTS.busyDelayMs, 0), 10_000)

/** The settings of the delivery worker from the wing's options. */
export function deliverySettings(
  options: WebhooksOptions & { transport: WebhookTransport },
  policy: AddressPolicy,
): DeliverySettings {
  return {
    retryWindowMs: options.retryWindowMs ?? WEBHOOK_DEFAULTS.retryWindowMs,
    pauseThreshold: options.pauseThreshold ?? WEBHOOK_DEFAULTS.pauseThreshold,
    connectTimeoutMs: options.connectTimeoutMs ?? WEBHOOK_DEFAULTS.connectTimeoutMs,
    timeoutMs: options.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs,
    maxResponseBytes: options.maxResponseBytes ?? WEBHOOK_DEFAULTS.maxResponseBytes,
    busyDelayMs: busyDelayOf(options),
    policy,
    transport: options.transport,
  }
}

/** Most webhook senders running at once in a process (`JobHandler.maxRunning`). */
export const WEBHOOK_SENDERS = 4

/**
 * The `webhooks.deliver` job: at least once, in each endpoint's order. The fan-out (`fanOut`)
 * numbered the endpoint's deliveries and enqueued the job of the first of each batch. A job takes the endpoint's
 * lease (one sender per endpoint across instances; held: it runs again later), numbers what a
 * version before the fan-out left unnumbered (`numberWaiting`), and, when its delivery is the endpoint's
 * oldest waiting one (the head) or the head was never tried, sends the endpoint's pending
 * deliveries in sequence order until the queue is empty, one fails or its time is up. A failed
 * delivery is retried by its own job, with backoff (this one's: the queue's; another's: put back
 * due later). Behind a head that failed, a job ends: the head's job sends the rest once the head
 * goes. Each delivery sent is settled with its own job deleted (it never runs). A delivery older
 * than the retry window fails for good; an endpoint that failed `pauseThreshold` times in a row
 * is paused, as is one its tenant turned off (`isActive: false`): a run sending it stops before
 * its next try, a job finding it off ends, and its deliveries wait as they are (nothing is written
 * per delivery: the endpoint's state is what stops them) until a resume (resume.ts) starts its
 * sender again. A run after one that failed or whose outcome is unknown looks at the endpoint's
 * queue whatever became of its own delivery (`answerable`).
 */
export function deliveryHandler(
  runtime: Runtime,
  settings: DeliverySettings,
): JobHandler<{ deliveryId: string; endpointId?: string } | { deliveryIds: string[] }> {
  return {
    maxAttempts: Number.MAX_SAFE_INTEGER,
    // A sender may hold its slot for as long as a receiver a tenant chose takes to answer: at most
    // half the queue's slots (4 of the default 8), so the sign-in codes' deliveries and the other
    // jobs always find one.
    maxRunning: WEBHOOK_SENDERS,
    // A run may wait for a busy service twice (before it starts and before its last try).
    timeoutMs: DRAIN_BUDGET_MS + settings.timeoutMs + 5000 + 2 * settings.busyDelayMs,
    async run(payload, context) {
      // A job of a version before the fan-out covers an event's deliveries (`deliveryIds`, one per
      // endpoint): each in turn, and the first
      // failure of one of them retries the job (the others, sent, are skipped then).
      let failure: unknown
      const endpointId = 'endpointId' in payload ? payload.endpointId : undefined
      const turn: Turn = { tries: 0, started: Date.now() }
      for (const deliveryId of 'deliveryIds' in payload ? payload.deliveryIds : [payload.deliveryId])
        await runOne(deliveryId, { context, turn, endpointId }).catch((error: unknown) => {
          failure ??= error
        })
      if (failure) throw failure
      await settings.afterRun?.()
    },
  }

  async function runOne(
    deliveryId: string,
    input: { context: JobContext; turn: Turn; endpointId: string | undefined },
  ): Promise<void> {
    const { context, turn } = input
    const delivery = await runtime.store.get('webhookDeliveries', deliveryId)
    const endpointId = delivery?.endpointId ?? input.endpointId
    if (endpointId === undefined) return
    // The endpoint's turn (`passTurn`) sends whatever waits, its delivery sent meanwhile or not.
    const isTurn = context.jobId === turnJobIdOf(endpointId)
    // Sent already, by another delivery's run. Unless a run of this job ended unfinished
    // (`answerable`): it answered for what others left to it, so this one looks again. So does
    // the job of a delivery dropped from the full backlog (`isDropped`): a run that left the queue
    // to it (its failed head, or its retry handed over) sends nothing more, and the job of the new
    // head the fan-out enqueued may have found that run's lease held and ended.
    if (
      !isTurn &&
      (!delivery || (delivery.state !== 'pending' && !answerable(context) && !isDropped(delivery)))
    )
      return
    // A busy service first serves its requests: a new delivery waits for it (up to `busyDelayMs`).
    if (delivery)
      await yieldToRequests(runtime, { since: delivery.createdAt, settings, signal: context.signal })
    const endpoint = await runtime.store.get('webhookEndpoints', endpointId)
    if (!endpoint) {
      if (delivery?.state === 'pending')
        await settle(runtime, delivery, { state: 'failed', lastError: 'endpoint_deleted' })
      return
    }
    // Turned off (or paused by the service): what waits waits, this delivery and the rest (a
    // batch's have no job of their own), until `isActive: true` starts a sender again (resume.ts)
    // that sends it all in order.
    if (!isOn(endpoint)) return
    while (
      await sendWhatWaits(runtime, { endpointId: endpoint.id, own: deliveryId, settings, context, turn })
    );
  }
}

/**
 * One pass of a run: takes the endpoint's lease (held by another run: that run sends this
 * delivery too, as it looks again after giving the lease back or puts the endpoint's turn back,
 * or its job does if it dies), numbers what committed, and sends the queue from its head until the
 * run's turn is over (`TURN_TRIES`) or the endpoint is off. Resolves true when the run must look
 * again: it emptied the queue (or found the endpoint off, and it is on again) and gave the lease
 * back, and something committed meanwhile may have found the lease held (its turn over by then, it
 * puts the endpoint's turn back instead). A failure anywhere fails the run (a lease it could not
 * give back too): its retry looks again (`answerable`).
 */
async function sendWhatWaits(
  runtime: Runtime,
  input: { endpointId: string; own: string; settings: DeliverySettings; context: JobContext; turn: Turn },
): Promise<boolean> {
  const { endpointId, settings, context, turn } = input
  // The lease is this run's, not the instance's: another job of the same worker (a later
  // delivery that became the head while this run still sends) must wait for it too. It names the
  // job too, which a run of the same job put again meanwhile recognises (below).
  const holder = `${runtime.jobs.workerId}/${runtime.newId()}#${context.jobId}`
  const held: Held = { until: 0 }
  if (!(await lease(runtime, endpointId, { workerId: holder, settings, held }))) {
    // Held by another run, which sends this delivery too. Unless that run may be this job's own,
    // dead with the lease (uncertain): then no one else will, so this job tries again once the
    // lease may have run out (a kill -9 mid-try frees the endpoint two timeouts later), and so
    // does any run after one that failed (`answerable`: it may hold a lease it could not give
    // back). Nor when this job is the endpoint's turn: the holder may be the run that put it back
    // (its turn over, it gives the lease back and ends) or one that left the queue to it, neither
    // of which looks again, so the turn tries again (with the queue's backoff) until it holds the
    // endpoint.
    if (answerable(context) || context.jobId === turnJobIdOf(endpointId)) throw new JobError('busy')
    // A delivery tried before (a retry, or a redelivery of one sent) that is the queue's head is
    // left by that run to its own job, this one: ending here would leave it, and every delivery
    // behind it, with no one to send them. Try again once the lease may be free.
    // Nor when it was dropped from the full backlog (`isDropped`): the holder may be a run that
    // left the queue to it.
    const own = await runtime.store.get('webhookDeliveries', input.own)
    if (own && ((own.state === 'pending' && own.attempts > 0) || isDropped(own))) throw new JobError('busy')
    // Nor when the holder is a run of this very job, put again under its id while that run still
    // sends (the endpoint turned off and on, a redelivery): that run's retry, should its try fail
    // (or anything after it), is this job's row, which ending here would delete, and the failed
    // head and every delivery behind it would wait for a job that no longer exists.
    const endpoint = await runtime.store.get('webhookEndpoints', endpointId)
    if (endpoint?.sendingBy?.endsWith(`#${context.jobId}`)) throw new JobError('busy')
    return false
  }
  let ended: Awaited<ReturnType<typeof sendHeld>>
  try {
    ended = await sendHeld(runtime, { ...input, holder, held })
  } catch (error) {
    await release(runtime, { endpointId, holder }).catch(() => undefined)
    throw error
  }
  // Not given back (the database failed), the lease keeps the endpoint until it runs out, and a
  // delivery whose job finds it held meanwhile is left to this run: the run fails, and its retry
  // (`answerable`) waits the lease out and looks again.
  await release(runtime, { endpointId, holder })
  // Turned off (or paused) while this run held the endpoint: what waits waits, unless it was
  // turned on again meanwhile (its sender, the head's job, may have found this run's lease held):
  // then this run looks again.
  if (ended === 'off' && (await isOff(runtime, endpointId))) return false
  if (ended !== 'empty' && ended !== 'off') return false
  if (!(await sendableHead(runtime, endpointId))) return false
  // Something committed meanwhile: this run sends it if its turn is not over, else its turn goes back.
  if (!turnOver(turn)) return true
  await passTurn(runtime, endpointId)
  return false
}

/**
 * The part of a pass under the endpoint's lease: numbers what committed, and sends the queue
 * from its head (`drain`) unless another job answers for it. Resolves how the pass ended: `left`
 * to another job, or as the drain ended (`turn over`: the endpoint's turn was put back).
 */
async function sendHeld(
  runtime: Runtime,
  input: {
    endpointId: string
    own: string
    settings: DeliverySettings
    context: JobContext
    turn: Turn
    holder: string
    held: Held
  },
): Promise<'left' | Awaited<ReturnType<typeof drain>>> {
  const { endpointId, context } = input
  await numberWaiting(runtime, endpointId)
  const queue = await pendingOf(runtime, endpointId)
  const head = queue[0]
  // Nothing waits (what this run was for went out with another run meanwhile): as when a drain
  // empties the queue, this run looks again once it gives the lease back, for what committed
  // meanwhile and whose job found the lease held.
  if (!head) return 'empty'
  // Behind a head that failed: its own job (never the endpoint's turn) retries it (with its
  // backoff) and sends the rest.
  const turnJob = turnJobIdOf(endpointId)
  if (head.attempts > 0 && (head.id !== input.own || context.jobId === turnJob)) return 'left'
  // The endpoint's turn waits at the end of the job queue (put back by a run whose turn was
  // over): it sends this delivery too, in order, when it comes, and this job does not jump the
  // line. Only a failed head's own job (its retry) goes on, and any job while the turn waits
  // out a backoff (it found the endpoint held).
  const waiting =
    head.attempts === 0 && context.jobId !== turnJob && (await runtime.store.get('jobs', turnJob))
  if (waiting && waiting.state === 'pending' && waiting.runAfter <= runtime.now()) return 'left'
  const ended = await drain(runtime, { ...input, queue })
  // Stopped before the end (the queue stops): this job runs again. Turn over: the rest waits
  // for the endpoint's next turn, at the end of the job queue (nothing left: as if emptied).
  if (ended === 'stopped') throw new JobError('interrupted')
  if (ended === 'turn over' && !(await passTurn(runtime, endpointId))) return 'empty'
  return ended
}

/**
 * Whether a run of this job before this one ended unfinished: it failed (whatever failed, after
 * its own delivery went out too: a store read, the lease's release, putting the turn back) or its
 * outcome is unknown (`uncertain`: its worker died, or it timed out). Such a run may have
 * answered for more than its own delivery (the rest of its fan-out batch, which has no job of its
 * own, and what other jobs left to it while it held the endpoint), and no one else will send
 * that: this run looks at the endpoint's queue whatever became of its own delivery.
 */
const answerable = (context: JobContext): boolean => context.uncertain || context.attempt > 1

/** Whether the endpoint sends: active, and not paused by the service. */
export const isOn = (endpoint: WebhookEndpointRow): boolean => endpoint.isActive && !endpoint.pausedAt

/**
 * Whether the endpoint sends nothing now (deleted, turned off, or paused by the service). Nothing
 * is written to its deliveries: they wait as they are, and the senders read the endpoint (before
 * each try), so nothing goes out once it is off and a resume (resume.ts) sends them all, in order.
 * Resolves false when it is on (turned on again meanwhile): the caller sends.
 */
async function isOff(runtime: Runtime, endpointId: string): Promise<boolean> {
  const endpoint = await runtime.store.get('webhookEndpoints', endpointId)
  return !endpoint || !isOn(endpoint)
}

/**
 * The head of the endpoint's queue when it can be sent: its first waiting delivery, pending. A
 * delivery a version before this one stored `paused` (turned off or paused then) stops the queue
 * until a resume (resume.ts) makes it pending again: nothing goes out past it.
 */
async function sendableHead(runtime: Runtime, endpointId: string): Promise<WebhookDeliveryRow | undefined> {
  const [head] = await runtime.store.pageBy('webhookDeliveries', {
    field: 'waitingFor',
    value: endpointId,
    by: 'queueKey',
    limit: 1,
  })
  return head?.state === 'pending' ? head : undefined
}

/**
 * Puts the endpoint's turn back at the end of the job queue (`turnJobIdOf`: one job an endpoint,
 * due now, so it is claimed after every sender's job due before it), for its first pending
 * delivery. Resolves false when none waits. Put back by its own run, the job is written anew
 * (pending), which the queue leaves as it is when that run ends.
 */
async function passTurn(runtime: Runtime, endpointId: string): Promise<boolean> {
  const first = await sendableHead(runtime, endpointId)
  if (!first) return false
  await runtime.store.transaction((tx) =>
    runtime.jobs.enqueue(
      tx,
      DELIVER_JOB,
      { deliveryId: first.id, endpointId },
      { id: turnJobIdOf(endpointId), runAfter: runtime.now() },
    ),
  )
  return true
}

/**
 * Enqueues a job that sends what waits on `endpointId` (its first pending delivery's), when
 * something does: at start, for deliveries recorded while no transport was configured (they have
 * no job).
 */
export async function ensureSender(runtime: Runtime, endpointId: string): Promise<void> {
  // The queue's order: numbered first (by number), then the rest as recorded.
  const first = await sendableHead(runtime, endpointId)
  if (!first) return
  await runtime.store.transaction((tx) =>
    runtime.jobs.enqueue(
      tx,
      DELIVER_JOB,
      { deliveryId: first.id },
      { id: `${jobIdOf(first.id)}.${runtime.newId()}` },
    ),
  )
}

/**
 * Deliveries read (numbered, or resumed) at a time: an endpoint's backlog is read a page at a
 * time, head first, and written a page a transaction.
 */
export const QUEUE_PAGE = 200

/**
 * The head of the endpoint's queue: its first numbered deliveries that wait, in sequence order, up
 * to the first that is not pending (one a version before this one stored `paused`, which a resume
 * has not reached yet: nothing goes out past it).
 */
async function pendingOf(runtime: Runtime, endpointId: string): Promise<WebhookDeliveryRow[]> {
  const page = await runtime.store.pageBy('webhookDeliveries', {
    field: 'waitingFor',
    value: endpointId,
    by: 'queueKey',
    limit: QUEUE_PAGE,
  })
  const stop = page.findIndex((row) => row.state !== 'pending' || row.sequence === 0)
  return stop < 0 ? page : page.slice(0, stop)
}

/**
 * Deliveries recorded by a version before the fan-out (wave 10) were written unnumbered, one per
 * event and endpoint: this numbers what is left of them. It gives the oldest waiting deliveries of the endpoint that have no number yet (a page, in the
 * order they were recorded: their time, then id) the next numbers, in one transaction with the
 * endpoint's counter: each number is used once, with no gap, and a delivery committed after this
 * read gets a higher number than every one before it, so numbers follow the order the events'
 * transactions committed (for events recorded at once by two instances, as far as their clocks
 * agree). The activities that record events only add rows; this is the one writer of the counter,
 * under the endpoint's lease (on PostgreSQL two numberings would fail each other's commit and the
 * rerun see the numbers).
 */
export async function numberWaiting(runtime: Runtime, endpointId: string): Promise<number> {
  // None left (the usual case): one committed read, no transaction.
  const unnumbered = await runtime.store.pageBy('webhookDeliveries', {
    field: 'waitingFor',
    value: endpointId,
    by: 'queueKey',
    after: UNNUMBERED_AFTER,
    limit: 1,
  })
  if (unnumbered.length === 0) return 0
  return runtime.store.transaction(async (tx) => {
    const endpoint = await tx.get('webhookEndpoints', endpointId)
    if (!endpoint) return 0
    // Read in the transaction, so a rerun (PostgreSQL) sees what another numbering did: the
    // queue after every number (`b` and the listKey), oldest first.
    const fresh = (
      await tx.pageBy('webhookDeliveries', {
        field: 'waitingFor',
        value: endpointId,
        by: 'queueKey',
        after: UNNUMBERED_AFTER,
        limit: QUEUE_PAGE,
      })
    ).filter((row) => row.sequence === 0)
    if (fresh.length === 0) return 0
    // A number moves a delivery from the queue's end to before every unnumbered one: behind the
    // cursor of a resume under way (resume.ts), which would never reach it. So it takes that
    // resume here, in the same transaction: its window restarted and, stored `paused` by a version
    // before, made pending (else the sender stops at it for good). Nothing moves but here.
    const from = await resumedFromIn(tx, endpointId)
    let sequence = endpoint.sequence
    for (const row of fresh) {
      sequence++
      await tx.put('webhookDeliveries', {
        ...row,
        ...(from !== undefined && needsResume(row, from)
          ? { state: 'pending' as const, retryFrom: Math.max(row.retryFrom ?? row.createdAt, from) }
          : {}),
        sequence,
        queueKey: queueKeyOf(sequence, row.listKey),
        body: numberedBody(row.body, sequence),
      })
    }
    await tx.put('webhookEndpoints', { ...endpoint, sequence })
    return fresh.length
  })
}

/** What the fan-out's failures are counted as (`job.retry`). */
export const FANOUT_KIND = 'webhooks.fanout'

/** Events fanned out in one transaction. */
const FANOUT_PAGE = 200

/**
 * Fans the oldest events that wait (a page, in the order they were recorded) out to their
 * endpoints, in one transaction with the endpoints' counters: each endpoint's next numbers, one
 * delivery row per event and endpoint, the event row deleted, and (with `deliver`) the job of
 * each endpoint's first new delivery that is on (one off waits for its resume), whose run sends the rest in
 * order. Each number is used once, with no gap, and an event committed after this read gets a
 * higher number than every one before it, so numbers follow the order the events' transactions
 * committed (for events recorded at once by two instances, as far as their clocks agree). Two
 * fan-outs at once (two instances on PostgreSQL) fail each other's commit on the counters and
 * the events; the rerun finds them gone. An endpoint deleted since gets nothing. At most
 * `maxWaiting` deliveries wait on an endpoint: beyond it the oldest of the source organization
 * holding the most are dropped in the same transaction (capBacklog.ts; counted as
 * `webhooks.delivery` `dropped` once committed). Resolves with how many events it fanned out (none
 * waiting: one committed read, no transaction).
 */
export async function fanOut(
  runtime: Runtime,
  options: { deliver: boolean; busyDelayMs?: number; maxWaiting?: number },
): Promise<number> {
  const page = { field: 'waiting', value: WAITING, by: 'listKey', limit: FANOUT_PAGE } as const
  const [oldest] = await runtime.store.pageBy('webhookEvents', { ...page, limit: 1 })
  if (!oldest) return 0
  // With `busyDelayMs` (the job worker's ticks): while the service is busy, only once the oldest is that old.
  if (options.busyDelayMs !== undefined && heldBack(runtime, oldest.createdAt, options.busyDelayMs)) return 0
  const cap = options.maxWaiting ?? MAX_WAITING_DEFAULT
  const { count, gone } = await runtime.store.transaction(async (tx) => {
    const events = await tx.pageBy('webhookEvents', page)
    const endpoints = new Map<string, WebhookEndpointRow | undefined>()
    // Each endpoint's new deliveries, oldest first: written once its backlog is capped.
    const adding = new Map<string, WebhookDeliveryRow[]>()
    for (const event of events) {
      for (const endpointId of new Set(event.endpointIds)) {
        const endpoint = endpoints.has(endpointId)
          ? endpoints.get(endpointId)
          : await tx.get('webhookEndpoints', endpointId)
        endpoints.set(endpointId, endpoint)
        if (!endpoint) continue
        // An event id already delivered to this endpoint (recorded again: a status change named as
        // an earlier one was) keeps its first delivery: a new row under its id would overwrite it
        // (its number never sent, gone from the listing) and send the receiver one id with two
        // bodies, the second dropped as a duplicate. A rerun of a transaction writes the same.
        if (await tx.get('webhookDeliveries', deliveryIdOf(event.id, endpointId))) continue
        const sequence = endpoint.sequence + 1
        endpoints.set(endpointId, { ...endpoint, sequence })
        const listKey = listKeyOf(event.createdAt, runtime.newId())
        const rows = adding.get(endpointId) ?? []
        adding.set(endpointId, rows)
        rows.push({
          id: deliveryIdOf(event.id, endpointId),
          eventId: event.id,
          endpointId,
          organizationId: event.organizationId,
          eventType: event.eventType,
          sequence,
          body: bodyOf(event, endpointId, sequence),
          // An endpoint turned off (since the event was recorded) or paused: it waits, with no
          // job, for the endpoint's resume (listed `paused` meanwhile).
          state: 'pending',
          attempts: 0,
          createdAt: event.createdAt,
          updatedAt: runtime.now(),
          waitingFor: endpointId,
          queueKey: queueKeyOf(sequence, listKey),
          listKey,
        })
      }
      await tx.delete('webhookEvents', event.id)
    }
    const gone: WebhookDeliveryRow[] = []
    const heads: string[] = []
    for (const [endpointId, rows] of adding) {
      // At most `cap` wait on an endpoint, whatever its state: the oldest of the source holding the
      // most are dropped (capBacklog.ts).
      const capped = await capBacklog(runtime, tx, { endpointId, adding: rows, cap })
      for (const row of capped.rows) await tx.put('webhookDeliveries', row)
      gone.push(...capped.dropped)
      // The job of its first new delivery that waits, when it is on (one off waits for its resume).
      const head = capped.rows.find((row) => row.waitingFor !== undefined)
      if (head && isOn(endpoints.get(endpointId)!)) heads.push(head.id)
    }
    for (const endpoint of endpoints.values()) if (endpoint) await tx.put('webhookEndpoints', endpoint)
    if (options.deliver)
      for (const id of heads)
        await runtime.jobs.enqueue(tx, DELIVER_JOB, { deliveryId: id }, { id: jobIdOf(id) })
    return { count: events.length, gone }
  })
  // Counted once committed (`latchkey_webhook_deliveries_total{outcome="dropped"}`).
  for (const row of gone)
    runtime.emit('webhooks.delivery', {
      outcome: 'dropped',
      endpointId: row.endpointId,
      eventType: row.eventType,
    })
  return count
}

/**
 * The fan-out as the job worker's ticks run it (`JobQueue.feed`): at once while the service is
 * quiet; while it is busy serving requests, only once the oldest event waiting is `busyDelayMs`
 * old, then every page that waits (up to `pages`), so a burst's requests are answered first and
 * the fan-out's transactions are few and large while a load lasts.
 */
export function fanOutFeeder(
  runtime: Runtime,
  options: { deliver: boolean; busyDelayMs: number; maxWaiting?: number; pages?: number },
) {
  return async (): Promise<void> => {
    // Busy or not is asked again before each page (`fanOut`): a load that begins meanwhile stops it.
    for (let page = 0; page < (options.pages ?? 20); page++)
      if ((await fanOut(runtime, options)) < FANOUT_PAGE) return
  }
}

/** What a run of a delivery job drains, and under which lease and turn. */
type DrainInput = {
  queue: WebhookDeliveryRow[]
  settings: DeliverySettings
  context: JobContext
  holder: string
  held: Held
  /** The delivery whose job this is. */
  own: string
  turn: Turn
}

/**
 * Sends `queue` in order, then whatever became pending meanwhile (numbered first), until the
 * queue is empty, the run's turn is over (`TURN_TRIES` tries, or its time), the endpoint is off
 * (deleted, turned off or paused) or the queue stops; on a failure of this job's own delivery,
 * throws (the job's retry), of another's, hands its retry to that delivery's job and ends. A lease
 * it could not renew throws too (the job runs again once the lease may be free).
 */
async function drain(
  runtime: Runtime,
  input: DrainInput,
): Promise<'empty' | 'turn over' | 'stopped' | 'handed over' | 'off'> {
  let queue = input.queue
  while (queue.length > 0) {
    try {
      await drainOnce(runtime, { ...input, queue })
    } catch (error) {
      if (error instanceof StopDrain) return error.ended
      throw error
    }
    if (input.context.signal.aborted) return 'stopped'
    if (turnOver(input.turn)) return 'turn over'
    const endpointId = queue[0]!.endpointId
    await numberWaiting(runtime, endpointId)
    queue = await pendingOf(runtime, endpointId)
  }
  return 'empty'
}

async function drainOnce(runtime: Runtime, input: DrainInput): Promise<void> {
  const { queue, settings, context, turn } = input
  for (const [index, delivery] of queue.entries()) {
    // The endpoint's next turn (or a job of its own) sends the rest.
    if (index > 0 && (turnOver(turn) || context.signal.aborted)) return
    const current = await runtime.store.get('webhookDeliveries', delivery.id)
    // Stored `paused` by a version before this one (the endpoint turned off or paused then), and
    // not resumed yet: nothing goes out past it (the resume's last page starts a sender again).
    if (current?.state === 'paused') throw new StopDrain('off')
    if (current?.state !== 'pending') continue
    if (
      runtime.now() - (current.retryFrom ?? current.createdAt) > settings.retryWindowMs &&
      (await expireIfStale(runtime, { delivery: current, settings, runningJob: context.jobId }))
    ) {
      runtime.emit('webhooks.delivery', {
        outcome: 'expired',
        endpointId: current.endpointId,
        eventType: current.eventType,
      })
      continue
    }
    await yieldToRequests(runtime, { since: current.createdAt, settings, signal: context.signal })
    // The holder sends nothing once the endpoint is off (its tenant turned it off, the service
    // paused it, or it was deleted): the rest waits, in its order, for a resume. Looked
    // at before the lease's renewal, which a deleted endpoint refuses.
    const endpoint = await runtime.store.get('webhookEndpoints', current.endpointId)
    if (!endpoint || !isOn(endpoint)) throw new StopDrain('off')
    // The endpoint's lease covers a try or two (renewed before a try that could outlast it): a
    // process killed mid-try frees the endpoint two timeouts later, not at the end of a whole drain.
    // Not renewed (another run took it once it ran out, or the endpoint is gone since): this run
    // sends nothing more and its turn is not put back; it ends, and its job runs again once the
    // lease may be free (`answerable`: it looks at the queue then), since the holder may leave
    // this job's failed delivery to it. Never a return with nothing done: `drain` would read the
    // same queue again and spin.
    if (
      runtime.now() + settings.timeoutMs + 1000 > input.held.until &&
      !(await lease(runtime, current.endpointId, { workerId: input.holder, settings, held: input.held }))
    )
      throw new JobError('busy')
    turn.tries++
    const outcome = await sendOnce(runtime, { delivery: current, endpoint, settings, signal: context.signal })
    runtime.emit('webhooks.delivery', {
      outcome: outcome.outcome,
      endpointId: current.endpointId,
      eventType: current.eventType,
    })
    const sent = outcome.request ? { lastRequest: outcome.request } : {}
    if (outcome.outcome === 'delivered') {
      await settle(
        runtime,
        current,
        { state: 'delivered', lastStatus: outcome.status, deliveredAt: runtime.now(), ...sent },
        context.jobId,
      )
      // Failures in a row end at the first success (once a drain: the rest find none).
      if (!input.held.clean) await succeeded(runtime, current.endpointId, settings)
      input.held.clean = true
      continue
    }
    const settled = await settle(runtime, current, {
      state: 'pending',
      lastError: outcome.outcome,
      ...(outcome.status ? { lastStatus: outcome.status } : {}),
      ...sent,
    })
    input.held.clean = false
    await failed(runtime, current.endpointId, settings)
    // Dropped from the full backlog while it was tried (`settleIn` kept it dropped): it has no
    // retry, so neither this job nor its own has anything to retry. Ending here (its job's retry,
    // or its own job put back) would leave what was kept with no sender: the fan-out that dropped
    // it enqueued its new head's job, which found this run's lease held and left the queue to it.
    // This run goes on with the queue (read again by `drain` once this page is done).
    if (settled && isDropped(settled)) continue
    // The retry of a delivery is its own job's: this one's is this run (retried with the queue's
    // backoff); another's (or the one an endpoint's turn was put back for) is put back due after a
    // backoff of its own, and this run ends.
    if (current.id === input.own && context.jobId !== turnJobIdOf(current.endpointId))
      throw new JobError(outcome.outcome)
    await retryLater(runtime, current)
    throw new StopDrain('handed over')
  }
}

/**
 * Ends a drain that handed a failed delivery's retry to that delivery's own job, or found the
 * endpoint off.
 */
class StopDrain extends Error {
  constructor(readonly ended: 'handed over' | 'off') {
    super(ended)
  }
}

/** Puts the delivery's own job back, due after an exponential backoff by its tries (1 s, 2 s, … at most 5 min). */
async function retryLater(runtime: Runtime, delivery: WebhookDeliveryRow): Promise<void> {
  const delay = Math.min(300_000, 1000 * 2 ** Math.max(0, delivery.attempts))
  await runtime.store.transaction((tx) =>
    runtime.jobs.enqueue(
      tx,
      DELIVER_JOB,
      { deliveryId: delivery.id },
      { id: jobIdOf(delivery.id), runAfter: runtime.now() + delay },
    ),
  )
}

/** One signed POST of `delivery` (the same body, a fresh timestamp and signature). */
async function sendOnce(
  runtime: Runtime,
  input: {
    delivery: WebhookDeliveryRow
    endpoint: WebhookEndpointRow
    settings: DeliverySettings
    signal: AbortSignal
  },
): Promise<{ outcome: DeliveryOutcome; status?: number; request?: WebhookDeliveryRow['lastRequest'] }> {
  const { delivery, endpoint, settings } = input
  // The allow list reaches a top-level organization's endpoints only: judged by the endpoint's
  // organization as it is now, whenever the endpoint was made (a row written before the rule,
  // into an allowed range, is refused like a new one). One read, and only with an allow list (or
  // the operator's loopback).
  const organization = dependsOnOrganization(settings.policy)
    ? await runtime.store.get('organizations', endpoint.organizationId)
    : undefined
  const policy = policyForOrganization(settings.policy, organization)
  if (refuseUrl(endpoint.url, policy)) return { outcome: 'refused' }
  // The operator's internal receivers may be named in the hosts file or by a search domain: their
  // hosts go to the system resolver. Anyone else's is asked of DNS directly (an end user's DNS
  // server answering slowly would otherwise hold the lookups of the whole process).
  const systemLookup = organization !== undefined && organization.parentOrganizationId === undefined
  // On a data dir, what was read may be committed and not yet on disk: nothing goes out of it
  // before it is (`Store.settled`).
  await runtime.store.settled()
  const body = new TextEncoder().encode(delivery.body)
  const now = runtime.now()
  const timestampMs = String(now)
  const { keyId, signature } = await signDelivery(runtime, { eventId: delivery.eventId, timestampMs, body })
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Latchkey-Webhooks/1',
    [WEBHOOK_HEADERS.eventId]: delivery.eventId,
    [WEBHOOK_HEADERS.eventType]: delivery.eventType,
    [WEBHOOK_HEADERS.organizationId]: delivery.organizationId,
    [WEBHOOK_HEADERS.timestamp]: timestampMs,
    [WEBHOOK_HEADERS.keyId]: keyId,
    [WEBHOOK_HEADERS.algorithm]: 'ed25519',
    [WEBHOOK_HEADERS.version]: 'v1',
    [WEBHOOK_HEADERS.signature]: signature,
  }
  const request = { url: endpoint.url, headers, sentAt: now }
  const ended = (outcome: DeliveryOutcome, status?: number) => ({
    outcome,
    ...(status !== undefined ? { status } : {}),
    request,
  })
  try {
    const response = await settings.transport({
      url: endpoint.url,
      headers: { ...headers },
      body,
      refuse: (address) => refuseAddress(address, policy),
      systemLookup,
      connectTimeoutMs: settings.connectTimeoutMs,
      timeoutMs: settings.timeoutMs,
      maxResponseBytes: settings.maxResponseBytes,
      signal: input.signal,
    })
    if (response.status >= 200 && response.status < 300) return ended('delivered', response.status)
    return ended('http_error', response.status)
  } catch (error) {
    if (error instanceof WebhookRefusedError) return ended('refused')
    if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
      return ended('timeout')
    return ended('network')
  }
}

/** The delivery with `changes`, waiting on its endpoint's queue while pending or paused. */
export function withState(row: WebhookDeliveryRow, changes: Partial<WebhookDeliveryRow>): WebhookDeliveryRow {
  const { waitingFor: _, ...next } = { ...row, ...changes }
  return next.state === 'pending' || next.state === 'paused' ? { ...next, waitingFor: next.endpointId } : next
}

/**
 * Writes the outcome of a try. A delivery settled for good takes its job with it, but for the job
 * that runs now (`runningJob`, the queue finishes it): sent by another delivery's run, its own job
 * never needs to run. Resolves with the row written (none: the delivery is gone).
 */
async function settle(
  runtime: Runtime,
  delivery: WebhookDeliveryRow,
  changes: Partial<WebhookDeliveryRow>,
  runningJob?: string,
): Promise<WebhookDeliveryRow | undefined> {
  return runtime.store.transaction(async (tx) => {
    const current = await tx.get('webhookDeliveries', delivery.id)
    return current ? settleIn(runtime, tx, { current, changes, runningJob }) : undefined
  })
}

async function settleIn(
  runtime: Runtime,
  tx: Transaction,
  input: {
    current: WebhookDeliveryRow
    changes: Partial<WebhookDeliveryRow>
    runningJob?: string | undefined
  },
): Promise<WebhookDeliveryRow> {
  const { current, changes } = input
  // Dropped from its endpoint's full backlog while this try was under way: a failed try does not
  // put it back on the queue (the cap holds); a success is recorded as one.
  const stayDropped = changes.state === 'pending' && isDropped(current)
  const next = withState(current, {
    ...changes,
    ...(stayDropped ? { state: 'failed' as const, lastError: BACKLOG_FULL } : {}),
    attempts: current.attempts + 1,
    updatedAt: runtime.now(),
  })
  await tx.put('webhookDeliveries', next)
  const job = jobIdOf(current.id)
  if (
    next.state !== 'pending' &&
    job !== input.runningJob &&
    (await tx.get('jobs', job))?.state === 'pending'
  )
    await tx.delete('jobs', job)
  return next
}

/**
 * Fails `delivery` for good (`expired`) when its retry window ran out, read again in one
 * transaction with the endpoint's resume, if one is under way: a resume restarts the window of
 * every delivery that waited (resume.ts writes it a page at a time, head first), and a sender
 * that meets one the resume has not reached yet counts from the resume. In one snapshot, either
 * the resume's job is still there or every page it wrote is. Resolves whether it failed it.
 */
async function expireIfStale(
  runtime: Runtime,
  input: { delivery: WebhookDeliveryRow; settings: DeliverySettings; runningJob: string },
): Promise<boolean> {
  return runtime.store.transaction(async (tx) => {
    const current = await tx.get('webhookDeliveries', input.delivery.id)
    if (current?.state !== 'pending') return false
    const since = Math.max(
      current.retryFrom ?? current.createdAt,
      (await resumedFromIn(tx, current.endpointId)) ?? 0,
    )
    if (runtime.now() - since <= input.settings.retryWindowMs) return false
    await settleIn(runtime, tx, {
      current,
      changes: { state: 'failed', lastError: 'expired' },
      runningJob: input.runningJob,
    })
    return true
  })
}

/**
 * When the endpoint's resume under way was made (its `webhooks.resume` job's `from`), read in
 * `tx`; none: no resume under way (never resumed, or its job paged the whole queue).
 */
export async function resumedFromIn(tx: Transaction, endpointId: string): Promise<number | undefined> {
  const job = await tx.get('jobs', resumeJobIdOf(endpointId))
  if (!job || !('json' in job.payload)) return undefined
  const from = Number((JSON.parse(job.payload.json) as { from?: unknown }).from)
  return Number.isFinite(from) ? from : undefined
}

/**
 * Whether a waiting delivery still needs the resume made at `from`: stored `paused` (by a version
 * before this one), or its retry window started before it.
 */
export const needsResume = (row: WebhookDeliveryRow, from: number): boolean =>
  row.state === 'paused' || (row.retryFrom ?? row.createdAt) < from

/** Takes the endpoint's lease unless another live worker holds it. */
async function lease(
  runtime: Runtime,
  endpointId: string,
  input: { workerId: string; settings: DeliverySettings; held?: Held },
): Promise<boolean> {
  return runtime.store.transaction(async (tx) => {
    const endpoint = await tx.get('webhookEndpoints', endpointId)
    if (!endpoint) return false
    const now = runtime.now()
    if (endpoint.sendingBy && endpoint.sendingBy !== input.workerId && (endpoint.sendingUntil ?? 0) > now)
      return false
    const sendingUntil = now + input.settings.timeoutMs * 2 + 1000
    await tx.put('webhookEndpoints', { ...endpoint, sendingBy: input.workerId, sendingUntil })
    if (input.held) input.held.until = sendingUntil
    return true
  })
}

/** The lease a run holds: until when (renewed before a try that could outlast it). */
interface Held {
  until: number
  /** The endpoint's failures in a row were reset by this run (nothing failed since). */
  clean?: boolean
}

/** Gives the endpoint's lease back, if it is still `holder`'s (an expired one may be another's now). */
async function release(runtime: Runtime, input: { endpointId: string; holder: string }): Promise<void> {
  await runtime.store.transaction(async (tx) => {
    const endpoint = await tx.get('webhookEndpoints', input.endpointId)
    if (endpoint?.sendingBy !== input.holder) return
    const { sendingBy: _, sendingUntil: __, ...rest } = endpoint
    await tx.put('webhookEndpoints', rest)
  })
}

async function succeeded(runtime: Runtime, endpointId: string, _settings: DeliverySettings): Promise<void> {
  await runtime.store.transaction(async (tx) => {
    const endpoint = await tx.get('webhookEndpoints', endpointId)
    if (!endpoint || endpoint.consecutiveFailures === 0) return
    await tx.put('webhookEndpoints', { ...endpoint, consecutiveFailures: 0 })
  })
}

/** Counts a failure; pauses the endpoint at the threshold (an event, and an app event to the others). */
async function failed(runtime: Runtime, endpointId: string, settings: DeliverySettings): Promise<void> {
  const paused = await runtime.store.transaction(async (tx) => {
    const endpoint = await tx.get('webhookEndpoints', endpointId)
    if (!endpoint) return undefined
    const consecutiveFailures = endpoint.consecutiveFailures + 1
    const pause = !endpoint.pausedAt && consecutiveFailures >= settings.pauseThreshold
    const next: WebhookEndpointRow = {
      ...endpoint,
      consecutiveFailures,
      ...(pause ? { pausedAt: runtime.now() } : {}),
    }
    await tx.put('webhookEndpoints', next)
    if (!pause) return undefined
    // The organization's other endpoints hear of it (this one's copy waits with the rest).
    await recordAppEvent(runtime, tx, {
      id: `evt_${runtime.newId()}`,
      organization: { id: endpoint.organizationId },
      type: 'LATCHKEY_ENDPOINT_PAUSED',
      data: { endpointId, consecutiveFailures },
    })
    // Nothing per delivery: its waiting deliveries wait as they are (a job that finds the
    // endpoint paused ends, so none spins on them) and resuming starts a sender again (resume.ts).
    return next
  })
  if (paused)
    runtime.emit('webhooks.endpoint_paused', { endpointId, consecutiveFailures: paused.consecutiveFailures })
}

export { deliveryIdOf }
