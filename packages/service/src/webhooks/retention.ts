import type { JobHandler } from '../kernel/JobQueue.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { WebhookDeliveryRow } from '../kernel/store/model.ts'
import { MAX_WAITING_DEFAULT, trimBacklog } from './capBacklog.ts'
import { isOn } from './deliver.ts'
import { enqueueHead } from './resume.ts'

/**
 * The job kind that prunes delivery rows: payload `{ endpointId }` (a deleted endpoint's rows) or
 * `{ after? }` (the periodic walk of every endpoint, from just past the endpoint id `after`).
 */
export const PRUNE_JOB = 'webhooks.prune'

/** What a `webhooks.prune` job carries. */
export interface PrunePayload {
  /** A deleted endpoint: every row of it goes. */
  endpointId?: string
  /** The periodic walk's place: the last endpoint (by id) a run before this one finished. */
  after?: string
}

export interface RetentionSettings {
  /** Settled deliveries (delivered, failed) older than this are deleted. */
  maxAgeMs: number
  /** Settled deliveries beyond this many per endpoint (the oldest first) are deleted. */
  maxPerEndpoint: number
  /** How often every endpoint is pruned. */
  intervalMs: number
}

export const RETENTION_DEFAULTS: RetentionSettings = {
  maxAgeMs: 7 * 24 * 60 * 60_000,
  maxPerEndpoint: 10_000,
  intervalMs: 60 * 60_000,
}

/** The settings from the wing's options (`retention`), each checked: a bad one throws naming it. */
export function retentionSettings(options: Partial<RetentionSettings> = {}): RetentionSettings {
  const settings = { ...RETENTION_DEFAULTS }
  for (const key of ['maxAgeMs', 'maxPerEndpoint', 'intervalMs'] as const) {
    const value = options[key]
    if (value === undefined) continue
    if (!Number.isSafeInteger(value) || value < 1)
      throw new Error(`webhooks.retention.${key} must be a whole number above 0, not ${value}`)
    settings[key] = value
  }
  return settings
}

/** Rows read (and deleted, in one transaction) at a time. */
const BATCH = 200

/**
 * Most waiting deliveries (pending, paused) one endpoint's prune reads past in a pass before it
 * stops: what waits is never deleted, so reading it is work for nothing, and an endpoint that is
 * off keeps its backlog (at most `maxWaitingPerEndpoint` of it: capBacklog.ts), as old as its outage.
 */
export const MAX_WAITING_READ = 1000

/**
 * Longest a run of the periodic walk goes on before it hands on to its next run (its place saved
 * in its job), well inside the job queue's lease.
 */
export const RUN_BUDGET_MS = 10_000

/** How long a run that handed on leaves its job before it is due again (the jobs due meanwhile go first). */
export const PRUNE_AGAIN_MS = 1000

const settled = (row: WebhookDeliveryRow) => row.state === 'delivered' || row.state === 'failed'

/** What one endpoint's prune did: how many rows it deleted, and whether it got to its end (not cut short by `signal`). */
export interface PruneOutcome {
  removed: number
  finished: boolean
}

/**
 * Deletes the endpoint's settled deliveries older than `cutoff` and, oldest first, those beyond
 * `keep` settled ones; with `everything` (a deleted endpoint's), every row. A delivery that waits
 * (pending, paused: still to be sent or retried) is never deleted, and never counts against
 * `keep`. Counts the endpoint's rows and its waiting ones (the indexes on endpointId and on
 * waitingFor; waiting ones over `maxWaiting` are first dropped, oldest first: `trimBacklog`),
 * then reads its rows oldest first by keyset pages (the index on endpointId and listKey) and
 * stops at the first row it must keep for both reasons, once it has seen every settled row the
 * counts found, or once it has read past `MAX_WAITING_READ` waiting ones: the rows it reads and
 * keeps are bounded, whatever waits (an endpoint that is off keeps its backlog, whatever its age). Aborted by `signal`, it stops after the page under way (not `finished`).
 */
export async function pruneEndpoint(
  runtime: Runtime,
  input: {
    endpointId: string
    cutoff: number
    keep: number
    everything?: boolean
    signal?: AbortSignal
    /** Most deliveries that wait (capBacklog.ts): a backlog over it loses its oldest first. */
    maxWaiting?: number
  },
): Promise<PruneOutcome> {
  const { store } = runtime
  // Settled rows still to meet on the walk (the counts are a moment apart: a row settled or
  // redelivered in between only ends this walk early, or lets it read up to the waiting bound).
  let settledLeft = Number.POSITIVE_INFINITY
  let excess = 0
  if (!input.everything) {
    let waiting = await store.count('webhookDeliveries', 'waitingFor', input.endpointId)
    // A backlog over the cap (left by a version before it, or a cap lowered since) is brought
    // down to it first: its oldest are dropped, and then pruned as any settled row.
    if (waiting > (input.maxWaiting ?? MAX_WAITING_DEFAULT)) {
      const gone = await trimBacklog(runtime, {
        endpointId: input.endpointId,
        cap: input.maxWaiting ?? MAX_WAITING_DEFAULT,
        signal: input.signal,
      })
      for (const row of gone)
        runtime.emit('webhooks.delivery', {
          outcome: 'dropped',
          endpointId: row.endpointId,
          eventType: row.eventType,
        })
      // The head may have gone with its job (a retry due later, which then finds it settled and
      // ends): the new head's job sends what is left, when the endpoint is on (one that is off
      // waits for its resume, which does the same).
      if (gone.length > 0)
        await store.transaction(async (tx) => {
          const endpoint = await tx.get('webhookEndpoints', input.endpointId)
          if (endpoint && isOn(endpoint)) await enqueueHead(runtime, tx, input.endpointId)
        })
      waiting = await store.count('webhookDeliveries', 'waitingFor', input.endpointId)
    }
    settledLeft = (await store.count('webhookDeliveries', 'endpointId', input.endpointId)) - waiting
    excess = settledLeft - input.keep
  }
  let after: string | undefined
  let removed = 0
  let waitingRead = 0
  for (;;) {
    if (settledLeft <= 0) return { removed, finished: true }
    const page = await store.pageBy('webhookDeliveries', {
      field: 'endpointId',
      value: input.endpointId,
      by: 'listKey',
      after,
      limit: BATCH,
    })
    const doomed: string[] = []
    let stop = false
    for (const row of page) {
      if (!input.everything && row.createdAt >= input.cutoff && excess <= 0) {
        stop = true
        break
      }
      if (input.everything || settled(row)) {
        doomed.push(row.id)
        excess--
        if (--settledLeft <= 0) {
          stop = true
          break
        }
      } else if (++waitingRead > MAX_WAITING_READ) {
        stop = true
        break
      }
    }
    if (doomed.length > 0)
      removed += await store.transaction(async (tx) => {
        let count = 0
        for (const id of doomed) {
          // Read again: a redelivery may have put it back on its endpoint's queue since.
          const row = await tx.get('webhookDeliveries', id)
          if (!row || !(input.everything || settled(row))) continue
          await tx.delete('webhookDeliveries', id)
          count++
        }
        return count
      })
    if (stop || page.length < BATCH) return { removed, finished: true }
    if (input.signal?.aborted) return { removed, finished: false }
    after = page.at(-1)!.listKey
  }
}

/** The id of the periodic prune due at the start of interval `slot` (one per slot, whatever the instances). */
const pruneJobId = (slot: number) => `${PRUNE_JOB}.${slot}`

/**
 * Makes sure the next periodic prune is enqueued (once per interval and process: a read, and a
 * write the first time). Called by the delivery worker, never on a request.
 */
export function pruneScheduler(runtime: Runtime, settings: RetentionSettings): () => Promise<void> {
  let scheduled = -1
  return async () => {
    const slot = Math.floor(runtime.now() / settings.intervalMs) + 1
    if (slot <= scheduled) return
    await runtime.store.transaction(async (tx) => {
      if (await tx.get('jobs', pruneJobId(slot))) return
      await runtime.jobs.enqueue(
        tx,
        PRUNE_JOB,
        {},
        { id: pruneJobId(slot), runAfter: slot * settings.intervalMs },
      )
    })
    scheduled = slot
  }
}

/**
 * The `webhooks.prune` job: `{ endpointId }` deletes every row of that (deleted) endpoint;
 * `{ after? }` prunes every endpoint by the retention settings, in id order from just past `after`,
 * then enqueues the next periodic prune. A run that has gone on for `RUN_BUDGET_MS` (or whose time
 * is up: its signal) hands on: it puts its job again, due `PRUNE_AGAIN_MS` later, with its place
 * (the last endpoint it finished; a deleted endpoint's job as it was), so a walk cut short goes on
 * where it stopped, never from the first endpoint again. Each run of the walk reports what it
 * deleted (`webhooks.pruned`).
 */
export function pruneHandler(
  runtime: Runtime,
  settings: RetentionSettings,
  schedule: () => Promise<void>,
  maxWaiting = MAX_WAITING_DEFAULT,
): JobHandler<PrunePayload> {
  return {
    timeoutMs: 5 * 60_000,
    async run({ endpointId, after }, context) {
      const budget = new AbortController()
      const timer = setTimeout(() => budget.abort(), RUN_BUDGET_MS)
      const onAbort = () => budget.abort()
      context.signal.addEventListener('abort', onAbort)
      if (context.signal.aborted) budget.abort()
      const signal = budget.signal
      const handOn = (payload: PrunePayload) =>
        runtime.store.transaction(async (tx) => {
          await runtime.jobs.enqueue(tx, PRUNE_JOB, payload, {
            id: context.jobId,
            runAfter: runtime.now() + PRUNE_AGAIN_MS,
          })
        })
      let removed = 0
      try {
        if (endpointId !== undefined) {
          // Deleted since: its rows go. (Created again under the same id is impossible: ids are new.)
          if (await runtime.store.get('webhookEndpoints', endpointId)) return
          const outcome = await pruneEndpoint(runtime, {
            endpointId,
            cutoff: 0,
            keep: 0,
            everything: true,
            signal,
          })
          if (!outcome.finished) await handOn({ endpointId })
          return
        }
        const cutoff = runtime.now() - settings.maxAgeMs
        for (let afterId = after ?? ''; ; ) {
          const endpoints = await runtime.store.page('webhookEndpoints', { afterId, limit: 100 })
          for (const endpoint of endpoints) {
            if (signal.aborted) return await handOn({ after: afterId })
            const outcome = await pruneEndpoint(runtime, {
              endpointId: endpoint.id,
              cutoff,
              keep: settings.maxPerEndpoint,
              signal,
              maxWaiting,
            })
            removed += outcome.removed
            // Cut short inside it: the next run starts at this endpoint again (what this one deleted is gone).
            if (!outcome.finished) return await handOn({ after: afterId })
            afterId = endpoint.id
          }
          if (endpoints.length < 100) break
        }
        await schedule()
      } finally {
        clearTimeout(timer)
        context.signal.removeEventListener('abort', onAbort)
        if (endpointId === undefined) runtime.emit('webhooks.pruned', { deliveries: removed })
      }
    },
  }
}
