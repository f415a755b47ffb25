import { randomInt } from 'node:crypto'
import type { Runtime } from '../kernel/Runtime.ts'
import { type WebhookDeliveryRow, waitingFromOf } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Store.ts'
import { queueKeyOf } from './recordEvent.ts'
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
  /** The new deliveries to write, oldest first: those dropped already settled `failed`. */
  rows: WebhookDeliveryRow[]
  /** Every delivery dropped (those of the queue, written here, and those of `rows`). */
  dropped: WebhookDeliveryRow[]
}

/**
 * Waiting deliveries at each end of the queue (its oldest and its newest) whose sources a full
 * backlog counts, besides the new deliveries' own, to find the one holding the most.
 */
const ENDS = 8

/** Deliveries picked at random positions of the queue whose sources are counted too. */
const PROBES = 4

/** Deliveries of one source read at a time (its oldest first) when it is the one dropped from. */
const SOURCE_PAGE = 32

/**
 * In the fan-out's transaction, before it writes `adding` (the endpoint's new deliveries, oldest
 * first): keeps the endpoint's waiting deliveries (pending, paused) at `cap` at most. Each new
 * delivery added to a full backlog drops one waiting delivery (settled `failed`, `lastError:
 * BACKLOG_FULL`): the oldest of the source organization (`organizationId`, where the event
 * happened) holding the most waiting deliveries on the endpoint, counting the new one, and the
 * new delivery's own source when it holds as many as that one. So an event drops another source's
 * delivery only when that source holds more than the event's own source does: one source
 * flooding an endpoint (an end user's cheap activities, on the operator's endpoint that gets
 * every sub-organization's events) ends up dropping its own oldest, and never takes another
 * source below its own count. Within a source the newest are kept: after an outage the receiver
 * gets the latest state of things, and sees the gap in `sequence`.
 *
 * The sources compared are those of the new deliveries, of the queue's `ENDS` oldest and newest,
 * and of `PROBES` deliveries at random positions (a source holding much of the queue is found
 * there), each counted once by the index on (waitingFrom, queueKey): a bounded number of reads a
 * fan-out, never a read of the whole queue. A backlog already over the cap (left by a version
 * before it, or a cap lowered since) first loses its oldest beyond the cap, `CATCH_UP` at most a
 * fan-out, whatever their source. The fan-out writes each endpoint's counter, so two fan-outs (two
 * instances on PostgreSQL) are serialised and the cap holds exactly.
 */
export async function capBacklog(
  runtime: Runtime,
  tx: Transaction,
  input: { endpointId: string; adding: WebhookDeliveryRow[]; cap: number },
): Promise<CappedBacklog> {
  const { endpointId, adding, cap } = input
  let waiting = await tx.count('webhookDeliveries', 'waitingFor', endpointId)
  if (waiting + adding.length <= cap) return { rows: adding, dropped: [] }
  const now = runtime.now()
  const gone: WebhookDeliveryRow[] = []
  const queueHead = (limit: number) =>
    tx.pageBy('webhookDeliveries', { field: 'waitingFor', value: endpointId, by: 'queueKey', limit })
  // Over the cap already: its oldest beyond it go first, whatever their source.
  const over = Math.min(Math.max(0, waiting - cap), CATCH_UP)
  const head = await queueHead(over + ENDS)
  for (const row of head.slice(0, over)) {
    const next = dropped(row, now)
    await tx.put('webhookDeliveries', next)
    gone.push(next)
  }
  waiting -= over
  const sources = await sourcesOf(tx, { endpointId, head: head.slice(over), waiting })
  const fair = new FairDrop(tx, endpointId, new Set(gone.map((row) => row.id)))
  for (const organizationId of sources) await fair.count(organizationId)
  const rows = [...adding]
  let size = waiting
  for (const [index, row] of adding.entries()) {
    await fair.count(row.organizationId)
    fair.add(row.organizationId, index)
    if (++size <= cap) continue
    size--
    // The count found what the index holds: a source counted is never empty. Were it, the new one goes.
    const victim =
      (await fair.takeOldest(fair.heaviest(row.organizationId))) ??
      (await fair.takeOldest(row.organizationId)) ??
      index
    if (typeof victim === 'number') {
      rows[victim] = dropped(rows[victim]!, now)
      gone.push(rows[victim])
    } else {
      const next = dropped(victim, now)
      await tx.put('webhookDeliveries', next)
      gone.push(next)
    }
  }
  return { rows, dropped: gone }
}

/**
 * The sources of the queue's `ENDS` oldest (`head`, read already) and newest waiting deliveries,
 * and of `PROBES` at random numbers between the two ends (each the first waiting at or after it).
 */
async function sourcesOf(
  tx: Transaction,
  input: { endpointId: string; head: WebhookDeliveryRow[]; waiting: number },
): Promise<Set<string>> {
  const { endpointId, head } = input
  const sources = new Set(head.map((row) => row.organizationId))
  if (input.waiting <= head.length) return sources
  const page = { field: 'waitingFor', value: endpointId, by: 'queueKey' } as const
  const tail = await tx.pageBy('webhookDeliveries', { ...page, limit: ENDS, descending: true })
  for (const row of tail) sources.add(row.organizationId)
  const first = head[0]?.sequence ?? 0
  const last = tail[0]?.sequence ?? 0
  // Numbered deliveries only (`a` and the number): what a version before left unnumbered sorts last.
  if (first > 0 && last > first + 1)
    for (let probe = 0; probe < PROBES; probe++) {
      const sequence = first + 1 + randomInt(last - first - 1)
      const [row] = await tx.pageBy('webhookDeliveries', {
        ...page,
        after: queueKeyOf(sequence - 1, ''),
        limit: 1,
      })
      if (row) sources.add(row.organizationId)
    }
  return sources
}

/**
 * The waiting deliveries of the sources a full backlog compares, counted once (index on
 * waitingFrom) and kept counted as the fan-out adds and drops: which source holds the most, and its
 * oldest (stored first, read a page at a time, then the fan-out's new ones, by index in `adding`).
 */
class FairDrop {
  private readonly held = new Map<string, number>()
  private readonly stored = new Map<string, { rows: WebhookDeliveryRow[]; after?: string; done: boolean }>()
  private readonly added = new Map<string, number[]>()

  constructor(
    private readonly tx: Transaction,
    private readonly endpointId: string,
    /** Dropped already in this transaction (read again, they are skipped). */
    private readonly gone: Set<string>,
  ) {}

  /** Counts what `organizationId` has waiting (once). */
  async count(organizationId: string): Promise<void> {
    if (this.held.has(organizationId)) return
    const waiting = await this.tx.count(
      'webhookDeliveries',
      'waitingFrom',
      waitingFromOf(this.endpointId, organizationId),
    )
    this.held.set(organizationId, waiting)
    // A source with nothing stored waiting has no page to read: what it drops is its own new one.
    if (waiting === 0 && !this.stored.has(organizationId))
      this.stored.set(organizationId, { rows: [], done: true })
  }

  /** The new delivery at `index` of `adding`, of `organizationId`, waits. */
  add(organizationId: string, index: number): void {
    this.held.set(organizationId, (this.held.get(organizationId) ?? 0) + 1)
    const added = this.added.get(organizationId) ?? []
    added.push(index)
    this.added.set(organizationId, added)
  }

  /** The source holding the most waiting deliveries; `own` (the new delivery's) when it ties. */
  heaviest(own: string): string {
    let most = own
    for (const [organizationId, held] of this.held)
      if (held > (this.held.get(most) ?? 0)) most = organizationId
    return most
  }

  /**
   * Takes `organizationId`'s oldest waiting delivery off the count: a stored row, or the index of a
   * new one in `adding` (none: nothing of it waits, which the count rules out).
   */
  async takeOldest(organizationId: string): Promise<WebhookDeliveryRow | number | undefined> {
    this.held.set(organizationId, Math.max(0, (this.held.get(organizationId) ?? 0) - 1))
    const stored = this.stored.get(organizationId) ?? { rows: [], done: false }
    this.stored.set(organizationId, stored)
    for (;;) {
      const row = stored.rows.shift()
      if (row && !this.gone.has(row.id)) {
        this.gone.add(row.id)
        return row
      }
      if (row) continue
      if (stored.done) break
      stored.rows = await this.tx.pageBy('webhookDeliveries', {
        field: 'waitingFrom',
        value: waitingFromOf(this.endpointId, organizationId),
        by: 'queueKey',
        ...(stored.after !== undefined ? { after: stored.after } : {}),
        limit: SOURCE_PAGE,
      })
      stored.done = stored.rows.length < SOURCE_PAGE
      stored.after = stored.rows.at(-1)?.queueKey ?? stored.after
    }
    return this.added.get(organizationId)?.shift()
  }
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
