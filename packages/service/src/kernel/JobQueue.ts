import { ServiceError } from './base/errors.ts'
import type { EventSink } from './base/events.ts'
import type { JobRow } from './store/model.ts'
import type { Store, Transaction } from './store/Store.ts'

/** What the queue needs of the service (the `Runtime` provides it). */
export interface JobQueueHost {
  readonly store: Store
  now(): number
  newId(): string
  seal(secret: string): string
  openText(sealed: string): string
  emit: EventSink['emit']
}

/** What a handler knows about the run it is asked to make. */
export interface JobContext {
  jobId: string
  kind: string
  /** 1 on the first run, then 2, 3 … */
  attempt: number
  /**
   * The previous run ended without a known outcome: its worker died while holding the job, or it
   * timed out. Work that must happen at most once checks it (or passes an idempotency key).
   */
  uncertain: boolean
  /** Aborted when the run's time is up or the queue stops. */
  signal: AbortSignal
}

/** Runs jobs of one kind, outside any transaction. A throw is a failure: retried, then final. */
export interface JobHandler<P = unknown> {
  run(payload: P, context: JobContext): Promise<void>
  /** Longest a run may take before it counts as failed (and uncertain). @default the queue's */
  timeoutMs?: number
  /** Runs before the job fails for good. @default the queue's */
  maxAttempts?: number
  /**
   * Most runs of this kind at once in this process (and never every run slot when the queue has
   * more than one): a kind whose runs last (a webhook sender waiting on a slow receiver, which a
   * tenant chooses) leaves slots for the others (the sign-in codes). @default no cap
   */
  maxRunning?: number
}

/**
 * Thrown by a handler for a failure that retrying cannot fix (a refused recipient, a bad
 * configuration): the job fails at once. `reason` is what is recorded and counted, so it must be
 * bounded and hold no payload content.
 */
export class PermanentJobError extends ServiceError {
  override name = 'PermanentJobError'
  constructor(readonly reason: string) {
    super(reason)
  }
}

/** A handler's failure with a bounded `reason` worth recording (an error code, not a message). */
export class JobError extends ServiceError {
  override name = 'JobError'
  constructor(readonly reason: string) {
    super(reason)
  }
}

export interface JobQueueOptions {
  /** Names this worker in claims. @default a new id */
  workerId?: string
  /** How often the worker looks for due jobs (and expired leases). @default 500 */
  pollMs?: number
  /** How long a claim holds a job; a worker that dies lets it go after this. @default 60000 */
  leaseMs?: number
  /** Longest a run may take (kept below the lease). @default 30000 */
  timeoutMs?: number
  /** Runs before a job fails for good. @default 5 */
  maxAttempts?: number
  /** Backoff before retry n is `min(maxMs, baseMs · 2^(n-1))`, with up to a fifth of jitter. */
  backoff?: { baseMs?: number; maxMs?: number }
  /** Jobs run at once by this worker. @default 8 */
  concurrency?: number
}

export interface EnqueueOptions {
  /** Seal the payload under the master key (it holds a secret: a code, a contact, a key). */
  sealed?: boolean
  /** Not before this time (epoch ms). @default now */
  runAfter?: number
  /** The job's id (an idempotency key the caller already has). @default a new id */
  id?: string
}

const DEFAULTS = {
  pollMs: 500,
  leaseMs: 60_000,
  timeoutMs: 30_000,
  maxAttempts: 5,
  baseMs: 1000,
  maxMs: 5 * 60_000,
  concurrency: 8,
}

/** How the worker looks for due jobs: pages of this many, at most this many pages a tick. */
const CLAIM_PAGE = 64

/** A reason from whatever a handler threw: its own bounded reason, or only the error's class. */
function reasonOf(error: unknown): string {
  if (error instanceof PermanentJobError || error instanceof JobError) return error.reason.slice(0, 100)
  return error instanceof Error ? `error:${error.name}`.slice(0, 100) : 'error'
}

class TimedOut extends Error {
  override name = 'TimedOut'
}

/**
 * A durable job queue in the service's database. `enqueue(tx, kind, payload)` writes a job in the
 * caller's transaction, so the job exists exactly when the change that needs it committed. The
 * worker (`start`) claims due jobs, runs their handler outside any transaction with a timeout, then
 * deletes them (done), puts them back with an exponential backoff (retry) or marks them `failed`
 * (final).
 *
 * A claim is a transaction that re-reads the job and writes the worker's id and a lease end: with
 * several instances on one PostgreSQL database (SERIALIZABLE) two claims of one job conflict and
 * the rerun of the loser sees it taken, so exactly one instance runs each run; SQLite has one
 * process. A worker that dies holding a job leaves its lease to expire; then any worker (the
 * restarted one too) claims it again, told the last outcome is unknown (`uncertain`). A run
 * finishes its job only while its own claim stands, so a run that outlived its lease changes
 * nothing. Each claim has an id of its own (`claimedBy`: the worker's id, a slash, a new id): a job
 * put again while its run runs (`enqueue` under its id, attempts back to 0: the webhooks' turn
 * passed on, a delivery retried later) and claimed again by the same worker has the same worker
 * and attempts as the run before; that run's end must not finish the new run's claim.
 */
export class JobQueue {
  private readonly handlers = new Map<string, JobHandler<never>>()
  private readonly feeders: { kind: string; feeder: () => Promise<void> }[] = []
  private readonly settings: Required<Omit<JobQueueOptions, 'backoff' | 'workerId'>> & {
    baseMs: number
    maxMs: number
  }
  readonly workerId: string
  private timer: ReturnType<typeof setTimeout> | undefined
  private started = false
  private ticking: Promise<void> | undefined
  private wakeAgain = false
  private readonly running = new Set<Promise<void>>()
  private readonly stopping = new AbortController()

  constructor(
    private readonly host: JobQueueHost,
    options: JobQueueOptions = {},
  ) {
    this.workerId = options.workerId ?? host.newId()
    this.settings = {
      pollMs: options.pollMs ?? DEFAULTS.pollMs,
      leaseMs: options.leaseMs ?? DEFAULTS.leaseMs,
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      maxAttempts: options.maxAttempts ?? DEFAULTS.maxAttempts,
      concurrency: options.concurrency ?? DEFAULTS.concurrency,
      baseMs: options.backoff?.baseMs ?? DEFAULTS.baseMs,
      maxMs: options.backoff?.maxMs ?? DEFAULTS.maxMs,
    }
  }

  /** Registers the handler of `kind` (one per kind). */
  handle<P>(kind: string, handler: JobHandler<P>): void {
    if (this.handlers.has(kind)) throw new Error(`job kind ${kind} has a handler already`)
    this.handlers.set(kind, handler as JobHandler<never>)
  }

  /**
   * Registers work each tick of the worker does before it claims jobs (and each `runDue`): a
   * wing's batch step that may enqueue jobs (the webhooks' fan-out), so a row recorded in a
   * request's transaction needs no job of its own. One tick's feeders run one after the other; a
   * failure is counted as a retry of `kind` (`job.retry`) and tried again at the next tick.
   */
  feed(kind: string, feeder: () => Promise<void>): void {
    this.feeders.push({ kind, feeder })
  }

  /** The kinds with a handler. */
  kinds(): string[] {
    return [...this.handlers.keys()]
  }

  /**
   * Writes a job in `tx`: it exists once `tx` commits, and not if it rolls back. Call it from the
   * transaction that makes the change the job completes (it may be rerun: the job is written again,
   * under the same id only if `options.id` is given).
   */
  async enqueue(
    tx: Transaction,
    kind: string,
    payload: unknown,
    options: EnqueueOptions = {},
  ): Promise<string> {
    const json = JSON.stringify(payload)
    const now = this.host.now()
    const id = options.id ?? this.host.newId()
    await tx.put('jobs', {
      id,
      kind,
      state: 'pending',
      runAfter: options.runAfter ?? now,
      attempts: 0,
      payload: options.sealed ? { sealed: this.host.seal(json) } : { json },
      createdAt: now,
      updatedAt: now,
    })
    return id
  }

  /** Starts polling for due jobs (idempotent). */
  start(): void {
    if (this.started || this.stopping.signal.aborted) return
    this.started = true
    this.schedule(0)
  }

  /** Looks for due jobs now rather than at the next poll (after a commit that enqueued one). */
  wake(): void {
    this.schedule(0)
  }

  /** Stops polling and waits for the runs under way (each is aborted). */
  async stop(): Promise<void> {
    this.stopping.abort()
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    await this.ticking
    await Promise.allSettled([...this.running])
  }

  /**
   * The next tick of the poll loop, once `start`ed. A queue that was not started (stepped with
   * `runDue`) never ticks by itself: a finished run used to start a tick of its own there, which could
   * claim a job that had just become due before the caller's `runDue` did.
   */
  private schedule(delayMs: number): void {
    if (!this.started || this.stopping.signal.aborted) return
    if (this.ticking) {
      // A tick is under way: it looks again as soon as it ends.
      if (delayMs === 0) this.wakeAgain = true
      return
    }
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.ticking = this.runDue()
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => {
          this.ticking = undefined
          const again = this.wakeAgain
          this.wakeAgain = false
          this.schedule(again ? 0 : this.settings.pollMs)
        })
    }, delayMs)
    // Polling alone never keeps a process alive.
    ;(this.timer as { unref?: () => void }).unref?.()
  }

  /**
   * Claims the jobs due now (up to the free run slots) and starts them; resolves with how many it
   * started. The poll loop calls it; tests call it to step the queue.
   */
  async runDue(): Promise<number> {
    for (const { kind, feeder } of this.feeders)
      await feeder().catch((error: unknown) =>
        this.host.emit('job.retry', { kind, attempts: 1, reason: reasonOf(error) }),
      )
    const free = this.settings.concurrency - this.running.size
    if (free <= 0 || this.handlers.size === 0) return 0
    const claimed = await this.claim(free)
    for (const job of claimed) {
      this.runningKinds.set(job.kind, (this.runningKinds.get(job.kind) ?? 0) + 1)
      const run = this.execute(job).finally(() => {
        this.running.delete(run)
        this.runningKinds.set(job.kind, (this.runningKinds.get(job.kind) ?? 1) - 1)
        // A slot is free: more may be due.
        this.schedule(0)
      })
      this.running.add(run)
    }
    return claimed.length
  }

  /** Resolves when every run started so far has finished (tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running])
  }

  /** Runs of `kind` under way in this process. */
  private readonly runningKinds = new Map<string, number>()

  /** The most runs of `kind` at once: its handler's `maxRunning`, leaving one slot for the others. */
  private capOf(kind: string): number | undefined {
    const cap = this.handlers.get(kind)?.maxRunning
    if (cap === undefined) return undefined
    const { concurrency } = this.settings
    return Math.max(1, Math.min(cap, concurrency > 1 ? concurrency - 1 : 1))
  }

  private claimable(job: JobRow, now: number): boolean {
    if (!this.handlers.has(job.kind)) return false
    if (job.state === 'pending') return job.runAfter <= now
    return job.state === 'running' && (job.claimedUntil ?? 0) <= now
  }

  private async claim(limit: number): Promise<JobRow[]> {
    const store = this.host.store
    const now = this.host.now()
    // Committed reads first: an idle queue costs no transaction.
    const candidates = [
      ...(await this.duePending(now, limit)),
      ...(await store.findBy('jobs', 'state', 'running')),
    ].filter((job) => this.claimable(job, now))
    if (candidates.length === 0) return []
    // Several workers see the same due jobs: each tries a random few, so they seldom collide.
    for (let i = candidates.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1))
      ;[candidates[i], candidates[j]] = [candidates[j]!, candidates[i]!]
    }
    // But a capped kind's jobs (runs a tenant can make last) take their places in the order they
    // became due: a job put back at the end (a webhook sender whose turn is over) waits behind
    // every one due before it, whoever's it is, not a draw that may pass it over again and again.
    const capped = (job: JobRow) => this.capOf(job.kind) !== undefined
    const inOrder = candidates.filter(capped).sort((a, b) => a.runAfter - b.runAfter)
    for (let i = 0, next = 0; i < candidates.length; i++)
      if (capped(candidates[i]!)) candidates[i] = inOrder[next++]!
    // Up to `limit`, and no kind past its `maxRunning` (counting its runs under way).
    const counts = new Map(this.runningKinds)
    const picked: string[] = []
    for (const job of candidates) {
      if (picked.length >= limit) break
      const cap = this.capOf(job.kind)
      const running = counts.get(job.kind) ?? 0
      if (cap !== undefined && running >= cap) continue
      counts.set(job.kind, running + 1)
      picked.push(job.id)
    }
    if (picked.length === 0) return []
    const claimed = await store.transaction(async (tx) => {
      const at = this.host.now()
      const taken: { row: JobRow; expired: boolean }[] = []
      for (const id of picked) {
        const job = await tx.get('jobs', id)
        if (!job || !this.claimable(job, at)) continue
        // A lease that ran out means the last run's outcome is unknown.
        const expired = job.state === 'running'
        const row: JobRow = {
          ...job,
          state: 'running',
          attempts: job.attempts + 1,
          claimedBy: `${this.workerId}/${this.host.newId()}`,
          claimedUntil: at + this.settings.leaseMs,
          uncertain: Boolean(job.uncertain) || expired,
          updatedAt: at,
        }
        await tx.put('jobs', row)
        taken.push({ row, expired })
      }
      return taken
    })
    for (const { row, expired } of claimed) if (expired) this.host.emit('job.reclaimed', { kind: row.kind })
    return claimed.map(({ row }) => row)
  }

  /**
   * Pending jobs due by `now` that this worker could start, the earliest first. One page of the
   * pending jobs in `runAfter` order (the index on state and runAfter), so a backlog thousands of
   * jobs deep (webhook deliveries behind a slow receiver) costs a tick one short read, not all of
   * it. A capped kind's jobs past what it may still start here (`capOf`, less its runs under way)
   * are passed over, not counted. When the page is all due and holds too few jobs this worker can
   * start (a front of webhook senders at their cap, which a few tenants make; jobs of kinds another
   * process runs), each kind it can start is read by itself, its earliest due jobs (the index on
   * pending jobs' kind and runAfter): such a front once hid every other kind's jobs due behind it
   * (everyone's sign-in codes), and reading past it page by page cost a tick every pending job.
   * Epoch milliseconds sort as text only with as many digits (13, from 2001 to 2286); any other
   * clock reads every pending job.
   */
  private async duePending(now: number, limit: number): Promise<JobRow[]> {
    const { store } = this.host
    if (String(now).length !== 13) return store.findBy('jobs', 'state', 'pending')
    // What each capped kind may still start here.
    const room = new Map<string, number>()
    for (const kind of this.handlers.keys()) {
      const cap = this.capOf(kind)
      if (cap !== undefined) room.set(kind, cap - (this.runningKinds.get(kind) ?? 0))
    }
    const found: JobRow[] = []
    const taken = new Set<string>()
    const take = (row: JobRow) => {
      if (!this.handlers.has(row.kind) || taken.has(row.id)) return
      const left = room.get(row.kind)
      if (left !== undefined) {
        if (left <= 0) return
        room.set(row.kind, left - 1)
      }
      taken.add(row.id)
      found.push(row)
    }
    const front = await store.pageBy('jobs', {
      field: 'state',
      value: 'pending',
      by: 'runAfter',
      limit: CLAIM_PAGE,
    })
    for (const row of front) {
      if (row.runAfter > now) return found
      take(row)
    }
    if (front.length < CLAIM_PAGE || found.length >= limit * 4) return found
    for (const kind of this.handlers.keys()) {
      if ((room.get(kind) ?? 1) <= 0) continue
      const rows = await store.pageBy('jobs', {
        field: 'pendingKind',
        value: kind,
        by: 'runAfter',
        limit: CLAIM_PAGE,
      })
      for (const row of rows) {
        if (row.runAfter > now) break
        take(row)
      }
    }
    return found
  }

  private payloadOf(job: JobRow): unknown {
    const text = 'sealed' in job.payload ? this.host.openText(job.payload.sealed) : job.payload.json
    return JSON.parse(text)
  }

  private async execute(job: JobRow): Promise<void> {
    const handler = this.handlers.get(job.kind)!
    const timeoutMs = Math.min(handler.timeoutMs ?? this.settings.timeoutMs, this.settings.leaseMs)
    const maxAttempts = handler.maxAttempts ?? this.settings.maxAttempts
    const controller = new AbortController()
    const onStop = () => controller.abort()
    this.stopping.signal.addEventListener('abort', onStop)
    let timer: ReturnType<typeof setTimeout> | undefined
    let outcome: { ok: true } | { ok: false; reason: string; final: boolean; uncertain: boolean }
    try {
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          controller.abort()
          reject(new TimedOut())
        }, timeoutMs)
      })
      await Promise.race([
        Promise.resolve().then(() =>
          handler.run(this.payloadOf(job) as never, {
            jobId: job.id,
            kind: job.kind,
            attempt: job.attempts,
            uncertain: Boolean(job.uncertain),
            signal: controller.signal,
          }),
        ),
        timedOut,
      ])
      outcome = { ok: true }
    } catch (error) {
      const timed = error instanceof TimedOut
      outcome = {
        ok: false,
        reason: timed ? 'timeout' : reasonOf(error),
        final: error instanceof PermanentJobError || job.attempts >= maxAttempts,
        uncertain: timed,
      }
    } finally {
      clearTimeout(timer)
      this.stopping.signal.removeEventListener('abort', onStop)
    }
    await this.finish(job, outcome).catch(() => {
      // The database is out: the lease runs out and the job is claimed again (uncertain).
      this.host.emit('job.unrecorded', { kind: job.kind })
    })
  }

  private async finish(
    job: JobRow,
    outcome: { ok: true } | { ok: false; reason: string; final: boolean; uncertain: boolean },
  ): Promise<void> {
    const finished = await this.host.store.transaction(async (tx) => {
      const current = await tx.get('jobs', job.id)
      // Another claim holds it now (this run outlived its lease, or its job was put again and
      // claimed again, by this worker too): theirs to finish.
      if (current?.state !== 'running' || current.claimedBy !== job.claimedBy) return false
      const at = this.host.now()
      if (outcome.ok) {
        await tx.delete('jobs', job.id)
        return true
      }
      const { claimedBy: _, claimedUntil: __, ...rest } = current
      await tx.put('jobs', {
        ...rest,
        state: outcome.final ? 'failed' : 'pending',
        runAfter: outcome.final ? current.runAfter : at + this.backoff(current.attempts),
        // Once a run's outcome is unknown, every later run must allow that it happened.
        uncertain: Boolean(current.uncertain) || outcome.uncertain,
        lastError: outcome.reason,
        updatedAt: at,
      })
      return true
    })
    if (!finished) return
    if (outcome.ok) this.host.emit('job.done', { kind: job.kind, attempts: job.attempts })
    else
      this.host.emit(outcome.final ? 'job.failed' : 'job.retry', {
        kind: job.kind,
        attempts: job.attempts,
        reason: outcome.reason,
      })
  }

  /** Wait before the run after `attempts` runs: exponential, capped, with up to a fifth of jitter. */
  private backoff(attempts: number): number {
    const { baseMs, maxMs } = this.settings
    const delay = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1))
    return Math.round(delay * (1 - Math.random() * 0.2))
  }
}
