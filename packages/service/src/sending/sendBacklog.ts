// The sends still open (signed and committed, not yet final), read in the background by `start` for
// its admin `/readyz` and `/metrics`: how many wait to be broadcast or mined on each chain family,
// and how long the oldest has waited. A send that waits minutes to be broadcast means no instance
// broadcasts it: every instance runs with `[sending] worker = false`, or the workers cannot reach
// the node. Neither can be seen from one instance's configuration, so it is read from the sends.
import { lookEvery } from '../kernel/base/async.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { SendTransactionRow } from '../kernel/store/model.ts'
import { namespaceOf } from './ChainSender.ts'
import { OPEN_STATUSES, type OpenStatus, openSends, runsSendWorker, SENDING } from './sendingState.ts'

/** How long the oldest PENDING send may wait to be broadcast before the watch reports it (seconds). */
export const STALLED_SECONDS = 120

/** The open sends of one chain family in one status, at the last look. */
export interface SendBacklog {
  /** The CAIP-2 namespace (`eip155`, `solana`, or one a `sendingWing({ senders })` added). */
  chain: string
  status: OpenStatus
  count: number
  /** Seconds since the oldest of them was signed; 0 when there is none. */
  oldestSeconds: number
}

/** What the admin `/readyz` shows of the sends (`sends`). */
export interface SendBacklogReport {
  /** Whether this instance runs the send worker (`[sending] worker` and some node configured). */
  worker: boolean
  /** By chain family and status; empty until the first look. */
  open: SendBacklog[]
  /** Epoch ms of the last look; null before it. */
  checkedAt: number | null
}

export interface SendBacklogWatch {
  latest(): SendBacklogReport
  /** Looks now (one look at a time: a call during one waits for it). */
  refresh(): Promise<void>
  stop(): void
}

const WATCHES = new WeakMap<Runtime, SendBacklogWatch>()

/** The runtime's backlog watch, if `start` runs one. */
export function sendBacklogOf(runtime: Runtime): SendBacklogWatch | undefined {
  return WATCHES.get(runtime)
}

/**
 * The open sends by chain family and status at `now`. Every family the service has a sender for
 * appears with both statuses (a count of 0 too), so a gauge falls back to 0 once its sends are
 * done; a send of a family the service no longer has a sender for counts as `other` (a label never
 * takes a value from a row).
 */
export function backlogOf(runtime: Runtime, rows: readonly SendTransactionRow[], now: number): SendBacklog[] {
  const { senders } = runtime.stateOf(SENDING)
  const families = new Set(senders.keys())
  const key = (chain: string, status: OpenStatus) => `${chain} ${status}`
  const byKey = new Map<string, SendBacklog>()
  for (const chain of families)
    for (const status of OPEN_STATUSES)
      byKey.set(key(chain, status), { chain, status, count: 0, oldestSeconds: 0 })
  for (const row of rows) {
    if (row.status !== 'PENDING' && row.status !== 'BROADCASTED') continue
    const namespace = namespaceOf(row.caip2)
    const chain = families.has(namespace) ? namespace : 'other'
    const entry = byKey.get(key(chain, row.status)) ?? {
      chain,
      status: row.status,
      count: 0,
      oldestSeconds: 0,
    }
    entry.count++
    entry.oldestSeconds = Math.max(entry.oldestSeconds, Math.floor((now - row.createdAt) / 1000))
    byKey.set(key(chain, row.status), entry)
  }
  return [...byKey.values()]
}

/**
 * Reads the open sends now and then every `intervalMs` (one look at a time; a look the database
 * does not answer keeps the last one). Each look is a `send.backlog` event per family and status
 * (the metrics keep the last); `send.stalled` when a PENDING send has waited `STALLED_SECONDS`
 * or more and none did at the look before, `send.unstalled` when none does any more (the log's
 * warning and its all-clear). Never makes the service unready: sends wait in the database, and
 * taking every instance out of rotation would not broadcast them.
 */
export function watchSendBacklog(runtime: Runtime, options: { intervalMs?: number } = {}): SendBacklogWatch {
  const intervalMs = options.intervalMs ?? 15_000
  const worker = runsSendWorker(runtime)
  let report: SendBacklogReport = { worker, open: [], checkedAt: null }
  let stalled = false
  const look = async () => {
    // A database that is away rejects the look: the last one stands (checkedAt says how old).
    const rows = await openSends(runtime.store)
    const now = runtime.now()
    const open = backlogOf(runtime, rows, now)
    report = { worker, open, checkedAt: now }
    for (const { chain, status, count, oldestSeconds } of open)
      runtime.emit('send.backlog', { chain, status, count, oldestSeconds })
    // The PENDING sends that have waited STALLED_SECONDS or more, by family as counted above.
    const waiting = backlogOf(
      runtime,
      rows.filter((row) => row.status === 'PENDING' && now - row.createdAt >= STALLED_SECONDS * 1000),
      now,
    ).filter((entry) => entry.count > 0)
    if (waiting.length > 0 && !stalled)
      runtime.emit('send.stalled', {
        chains: waiting.map((entry) => entry.chain),
        count: waiting.reduce((sum, entry) => sum + entry.count, 0),
        oldestSeconds: Math.max(...waiting.map((entry) => entry.oldestSeconds)),
        workerHere: worker,
      })
    else if (waiting.length === 0 && stalled) runtime.emit('send.unstalled', {})
    stalled = waiting.length > 0
  }
  const looks = lookEvery(intervalMs, look)
  const watch: SendBacklogWatch = {
    latest: () => ({ ...report, open: report.open.map((entry) => ({ ...entry })) }),
    refresh: looks.refresh,
    stop() {
      looks.stop()
      if (WATCHES.get(runtime) === watch) WATCHES.delete(runtime)
    },
  }
  WATCHES.set(runtime, watch)
  return watch
}
