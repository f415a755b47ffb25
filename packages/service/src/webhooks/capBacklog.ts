import type { Runtime } from '../kernel/Runtime.ts'
import type { WebhookDeliveryRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Store.ts'
import type { WebhooksOptions } from './WebhooksOptions.ts'

/**
 * The `lastError` of a delivery dropped from its endpoint's full backlog: it was never sent (or
 * its last try failed) and it no longer waits. Listed `failed`, and redelivered like any other.
 */
export const BACKLOG_FULL = 'backlog_full'

/** Deliveries that may wait on one endpoint (pending or paused) by default. */
export const MAX_WAITING_DEFAULT = 10_000

/** The cap from the wing's options (`maxWaitingPerEndpoint`), checked: a bad one throws naming it. */
export function maxWaitingOf(options: Pick<WebhooksOptions, 'maxWaitingPerEndpoint'>): number {
  const value = options.maxWaitingPerEndpoint
  if (value === undefined) return MAX_WAITING_DEFAULT
  if (!Number.isSafeInteger(value) || value < 1)
    throw new Error(`webhooks.maxWaitingPerEndpoint must be a whole number above 0, not ${value}`)
  return value
}

/**
 * Most deliveries one fan-out drops from an endpoint's queue beyond as many as it adds: a backlog
 * already over the cap (left by a version before it, or by a cap lowered since) shrinks by this
 * many at each fan-out to it (and at each retention pass), in transactions of a bounded size.
 */
export const CATCH_UP = 200

/** Whether the delivery was dropped from a full backlog (and not sent since). */
export const isDropped = (row: WebhookDeliveryRow): boolean =>
  row.state === 'failed' && row.lastError === BACKLOG_FULL

/** The delivery dropped: settled `failed` (off its endpoint's queue), its tries as they were. */
export function dropped(row: WebhookDeliveryRow, now: number): WebhookDeliveryRow {
  const { waitingFor: _, ...rest } = row
  return { ...rest, state: 'failed', lastError: BACKLOG_FULL, updatedAt: now }
}

/** What the fan-out writes for one endpoint once its backlog is capped. */
export interface CappedBacklog {
  /** The new deliveries to write, oldest first: the oldest dropped already when more were added than the cap. */
  rows: WebhookDeliveryRow[]
  /** Every delivery dropped (those of the queue, written here, and those of `rows`). */
  dropped: WebhookDeliveryRow[]
}

/**
 * In the fan-out's transaction, before it writes `adding` (the endpoint's new deliveries, oldest
 * first): keeps the endpoint's waiting deliveries (pending, paused) at `cap` at most by dropping
 * the oldest (its queue's head first, by the queue's index; then the oldest of `adding`, when it
 * alone is more than the cap), each settled `failed` with `lastError: BACKLOG_FULL`. The newest
 * are kept: after an outage the receiver gets the latest state of things, and sees the gap in
 * `sequence`. One index count of what waits (at most the cap, plus what a version before left)
 * and, when full, one page of the queue's head: the fan-out writes each endpoint's counter, so
 * two fan-outs (two instances on PostgreSQL) are serialised and the cap holds exactly.
 */
export async function capBacklog(
  runtime: Runtime,
  tx: Transaction,
  input: { endpointId: string; adding: WebhookDeliveryRow[]; cap: number },
): Promise<CappedBacklog> {
  const { endpointId, adding, cap } = input
  const waiting = await tx.count('webhookDeliveries', 'waitingFor', endpointId)
  const excess = waiting + adding.length - cap
  if (excess <= 0) return { rows: adding, dropped: [] }
  const now = runtime.now()
  const fromQueue = Math.min(excess, waiting, adding.length + CATCH_UP)
  const head =
    fromQueue > 0
      ? await tx.pageBy('webhookDeliveries', {
          field: 'waitingFor',
          value: endpointId,
          by: 'queueKey',
          limit: fromQueue,
        })
      : []
  const gone: WebhookDeliveryRow[] = []
  for (const row of head) {
    const next = dropped(row, now)
    await tx.put('webhookDeliveries', next)
    gone.push(next)
  }
  // More new ones than the cap (a page of events larger than it): the oldest are never queued.
  const fromAdding = Math.max(0, excess - waiting)
  const rows = adding.map((row, index) => (index < fromAdding ? dropped(row, now) : row))
  return { rows, dropped: [...gone, ...rows.slice(0, fromAdding)] }
}

/** Deliveries dropped in one transaction of `trimBacklog`. */
const TRIM_BATCH = 1000

/**
 * Drops the oldest waiting deliveries of the endpoint beyond `cap` (a backlog a version before
 * this one left, or one a lowered cap leaves over it: the fan-out only ever adds up to the cap),
 * `TRIM_BATCH` a transaction, each counting again in it (a fan-out at once drops too: on
 * PostgreSQL the two are SERIALIZABLE and one reruns, so nothing is dropped twice over). The
 * retention job's pass calls it for an endpoint whose count is over. Stops once `signal` aborts.
 * Resolves with what it dropped.
 */
export async function trimBacklog(
  runtime: Runtime,
  input: { endpointId: string; cap: number; signal?: AbortSignal | undefined },
): Promise<WebhookDeliveryRow[]> {
  const gone: WebhookDeliveryRow[] = []
  while (!input.signal?.aborted) {
    const batch = await runtime.store.transaction(async (tx) => {
      const excess = (await tx.count('webhookDeliveries', 'waitingFor', input.endpointId)) - input.cap
      if (excess <= 0) return []
      const head = await tx.pageBy('webhookDeliveries', {
        field: 'waitingFor',
        value: input.endpointId,
        by: 'queueKey',
        limit: Math.min(excess, TRIM_BATCH),
      })
      const now = runtime.now()
      const rows = head.map((row) => dropped(row, now))
      for (const row of rows) await tx.put('webhookDeliveries', row)
      return rows
    })
    gone.push(...batch)
    if (batch.length < TRIM_BATCH) break
  }
  return gone
}
