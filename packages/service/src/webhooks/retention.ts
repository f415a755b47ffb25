import type { JobHandler } from '../kernel/JobQueue.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { WebhookDeliveryRow } from '../kernel/store/model.ts'

/** The job kind that prunes delivery rows (payload `{ endpointId? }`). */
export const PRUNE_JOB = 'webhooks.prune'

/** How long delivery rows are kept, and how many per endpoint. */
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

const settled = (row: WebhookDeliveryRow) => row.state === 'delivered' || row.state === 'failed'

/**
 * Deletes the endpoint's settled deliveries older than `cutoff` and, oldest first, those beyond
 * `keep`; with `everything` (a deleted endpoint's), every row. A delivery that waits (pending,
 * paused: still to be sent or retried) is never deleted. Reads its endpoint's rows oldest first by
 * keyset pages (the index on endpointId and listKey) and stops at the first row it must keep for
 * both reasons. Resolves with how many it deleted.
 */
export async function pruneEndpoint(
  runtime: Runtime,
  input: { endpointId: string; cutoff: number; keep: number; everything?: boolean; signal?: AbortSignal },
): Promise<number> {
  const { store } = runtime
  let excess = (await store.count('webhookDeliveries', 'endpointId', input.endpointId)) - input.keep
  let after: string | undefined
  let removed = 0
  for (;;) {
    const page = await store.pageBy('webhookDeliveries', {
      field: 'endpointId',
      value: input.endpointId,
      by: 'listKey',
      after,
      limit: BATCH,
    })
    const doomed: string[] = []
    let kept = false
    for (const row of page) {
      if (!input.everything && row.createdAt >= input.cutoff && excess <= 0) {
        kept = true
        break
      }
      if (input.everything || settled(row)) {
        doomed.push(row.id)
        excess--
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
    if (kept || page.length < BATCH || input.signal?.aborted) return removed
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
 * `{}` prunes every endpoint by the retention settings, then enqueues the next periodic prune.
 */
export function pruneHandler(
  runtime: Runtime,
  settings: RetentionSettings,
  schedule: () => Promise<void>,
): JobHandler<{ endpointId?: string }> {
  return {
    timeoutMs: 5 * 60_000,
    async run({ endpointId }, context) {
      if (endpointId !== undefined) {
        // Deleted since: its rows go. (Created again under the same id is impossible: ids are new.)
        if (!(await runtime.store.get('webhookEndpoints', endpointId)))
          await pruneEndpoint(runtime, {
            endpointId,
            cutoff: 0,
            keep: 0,
            everything: true,
            signal: context.signal,
          })
        return
      }
      const cutoff = runtime.now() - settings.maxAgeMs
      let removed = 0
      for (let afterId = ''; ; ) {
        const endpoints = await runtime.store.page('webhookEndpoints', { afterId, limit: 100 })
        for (const endpoint of endpoints) {
          if (context.signal.aborted) return
          removed += await pruneEndpoint(runtime, {
            endpointId: endpoint.id,
            cutoff,
            keep: settings.maxPerEndpoint,
            signal: context.signal,
          })
        }
        if (endpoints.length < 100) break
        afterId = endpoints.at(-1)!.id
      }
      runtime.emit('webhooks.pruned', { deliveries: removed })
      await schedule()
    },
  }
}
