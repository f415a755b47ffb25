import { CompiledQuery, type DatabaseConnection } from 'kysely'
import { nextTurn } from '../base/async.ts'
import type { StoreBackend } from './backends/StoreBackend.ts'
import type { TableName } from './model.ts'

/** Most transactions committed together. */
const GROUP_LIMIT = 64

/**
 * One transaction's work, run on its group's connection inside the group's database transaction:
 * `attempt` as `Transaction.attempt`, and the tables it writes added to `written` (shared by the
 * group). It may be rerun (see `GroupCommit`), so it must have no effect outside the database.
 */
export type GroupWork = (
  connection: DatabaseConnection,
  attempt: number,
  written: Set<TableName>,
  /** What the options' `share` opened for the group's database transaction, if anything. */
  scope?: unknown,
) => Promise<unknown>

interface Grouped {
  work: GroupWork
  attempt: number
  /** The statement that begins its transaction: only transactions with the same one share a group. */
  begin: string
  /** It runs in a group of its own. */
  alone: boolean
  /** When it was queued (`performance.now()`). */
  at: number
  /** What it gives the group's `share` (its reads ahead). */
  share: unknown
  /** The keys it runs under (`lanes`): no two groups at once hold one. */
  keys: readonly string[]
  resolve(value: unknown): void
  reject(error: unknown): void
}

/** What a group commit runs on, given by the store. */
export interface GroupCommitOptions {
  backend: StoreBackend
  /**
   * Lends the group a connection for `use`, with what it holds around the group (PostgreSQL: the
   * session locks the queue is for, taken before its `begin` and given back after its commit).
   */
  connect<R>(
    use: (connection: DatabaseConnection, ready?: Promise<unknown>) => Promise<R>,
    keys: readonly string[],
  ): Promise<R>
  /** How a transaction begins, unless `run` says otherwise. */
  begin: string
  /**
   * An error that ends the whole group: every transaction of it gets the error, none is rerun.
   * Any other error of a function's makes the group run again, each transaction alone.
   */
  fatal(error: unknown): boolean
  /** The group wrote `tables` and committed (or rolled back): called while it holds the connection. */
  committed(tables: Set<TableName>): void
  /** Runs `run` as the store runs every database call (refused once closed, outages as 503). */
  guard<R>(run: () => Promise<R>): Promise<R>
  /** Told, for each transaction, how long it waited for its group and how long the group took, ms. */
  timed?(waited: number, took: number): void
  /** Told how long each group's commit statement took, ms. */
  timedCommit?(took: number): void
  /**
   * What a group's transactions share: `open` runs after the group's `begin` with what each of its
   * transactions gave `run` (`share`), in order, and what it returns is handed to each one's work;
   * `close` runs after the last of them, before the commit (the store's `SharedAhead`: one read
   * ahead for the group, one write).
   */
  share?: {
    open(connection: DatabaseConnection, shares: unknown[]): Promise<unknown>
    /**
     * Sends the group's writes; `sent` says, as soon as it returns, that nothing is left to send
     * but what is on its way (the commit may then follow it at once: a write that fails aborts
     * the transaction, and the commit rolls it back).
     */
    close(connection: DatabaseConnection, scope: unknown): { done: Promise<void>; sent: boolean }
  }
  /**
   * Groups that may run at once, each on a connection of its own, where transactions name `keys`
   * (PostgreSQL's lock groups): a group takes the waiting transactions, in order, whose keys no
   * running group holds and no transaction queued before them waits for, so the transactions of
   * one key run one after the other, in the order they came, and those of different keys (one
   * organization's signings and another's) share a group or run beside it. `connect` is given
   * the union of the group's keys. Without it, one group at a time, whatever the keys.
   */
  lanes?: number
}

/**
 * Group commit: transactions that queue up while a group runs run as the next group, one database
 * transaction on one connection, one after the other, with one commit (so one fsync) for all of
 * them. Each sees the writes of those before it, as if each had committed before the next began.
 * Where it is used:
 * - a backend whose one connection runs transactions one after the other anyway
 *   (`StoreBackend.groupsCommits`, SQLite): every transaction;
 * - PostgreSQL, the transactions of this process that name `locks` (`Store.transaction`), in
 *   `lanes`: those of one lock one after the other anyway, as the lock orders them; a group takes
 *   the locks of all its transactions once, before its `begin`, and gives them back after its commit.
 *
 * When a function throws, the group is rolled back and each of its functions runs again in a
 * transaction of its own (a transaction's function may always be rerun: see `Store.transaction`),
 * so a throw undoes exactly its own writes; the reruns are attempts after the first (a signing's
 * rerun looks for a replay of itself first). Nobody hears back before the commit that holds their
 * writes: a result is acknowledged only once it is durable, and when the database fails (a commit,
 * or a statement on a full disk: `fatal`), no function of the group is acknowledged and each gets
 * the error.
 */
export class GroupCommit {
  /** Transactions waiting for the next group. */
  private readonly waiting: Grouped[] = []
  private committing = false
  /** Groups committed (or rolled back) so far, and the transactions they carried. */
  readonly counts = { batches: 0, items: 0 }

  constructor(private readonly options: GroupCommitOptions) {}

  /**
   * Runs `work` in the next group it fits (`begin`, or else the options'; `alone`: a group of its
   * own); resolves once the group that ran it has committed.
   */
  run<R>(
    work: GroupWork,
    attempt: number,
    {
      begin,
      alone = false,
      share,
      keys = [],
    }: { begin?: string; alone?: boolean; share?: unknown; keys?: readonly string[] } = {},
  ): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({
        work,
        attempt,
        begin: begin ?? this.options.begin,
        alone,
        at: performance.now(),
        share,
        keys,
        resolve: resolve as Grouped['resolve'],
        reject,
      })
      if (this.options.lanes !== undefined) {
        if (!this.scheduled) {
          this.scheduled = true
          // Once the code that queued it has run: the transactions queued meanwhile go together.
          queueMicrotask(() => {
            this.scheduled = false
            this.schedule()
          })
        }
        return
      }
      if (!this.committing) {
        this.committing = true
        nextTurn(() => void this.commitGroups())
      }
    })
  }

  /**
   * Each group starts a turn of the event loop after the first transaction queued (or after the
   * last group), so the transactions whose I/O completed meanwhile (their crypto job's answer, a
   * request's body) join it. The commit itself blocks the thread (the SQLite driver is
   * synchronous, and `synchronous = FULL` syncs the log each commit): a group that started in the
   * first one's microtasks would commit each transaction alone, one sync a request.
   */
  private async commitGroups(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        await this.commitGroup(this.waiting.splice(0, this.nextGroupSize()))
        await new Promise<void>((resolve) => nextTurn(resolve))
      }
    } finally {
      this.committing = false
    }
  }

  /** Keys the running groups hold (`lanes`). */
  private readonly held = new Set<string>()
  /** Groups running now (`lanes`). */
  private running = 0
  /** A `schedule` is queued (`lanes`). */
  private scheduled = false

  /**
   * Starts groups while lanes are free and some waiting transaction can go (`lanes`): the next
   * group is every waiting transaction, in order, up to the limit, that begins as the first one
   * does, whose keys no running group holds and no transaction left waiting before it names.
   */
  private schedule(): void {
    const lanes = this.options.lanes!
    while (this.running < lanes && this.waiting.length > 0) {
      const group: Grouped[] = []
      // The keys waiting are shared out over the free lanes: a group takes at most its share of
      // them (and every waiting transaction of those), so the transactions of many keys (many
      // organizations' signings) run in several groups at once rather than all in one.
      const waitingKeys = new Set(this.waiting.flatMap((item) => item.keys)).size
      const share = Math.max(1, Math.ceil(waitingKeys / (lanes - this.running)))
      const groupKeys = new Set<string>()
      // Keys a transaction left waiting names: those after it with one of them wait too (FIFO per key).
      const blocked = new Set<string>()
      const kept: Grouped[] = []
      for (const item of this.waiting) {
        const free = item.keys.every((key) => !this.held.has(key) && !blocked.has(key))
        const added = item.keys.filter((key) => !groupKeys.has(key)).length
        const fits =
          free &&
          group.length < GROUP_LIMIT &&
          (group.length === 0 ||
            (!item.alone &&
              !group[0]!.alone &&
              item.begin === group[0]!.begin &&
              groupKeys.size + added <= share))
        if (fits) {
          group.push(item)
          for (const key of item.keys) groupKeys.add(key)
        } else {
          kept.push(item)
          for (const key of item.keys) blocked.add(key)
        }
      }
      if (group.length === 0) break
      // In place, one by one (a spread of a very long queue would overflow the call's arguments).
      this.waiting.length = 0
      for (const item of kept) this.waiting.push(item)
      const keys = [...new Set(group.flatMap((item) => item.keys))].sort()
      for (const key of keys) this.held.add(key)
      this.running++
      // The keys go back as soon as the group's commit is on its way: the next group of them
      // forms then and sends its locks, which the database grants once this group has committed
      // and unlocked (its read follows its locks, so it sees this group's writes). A key's
      // groups still run one after the other, in order; only the round trip between them is saved.
      let released = false
      const release = () => {
        if (released) return
        released = true
        for (const key of keys) this.held.delete(key)
        if (this.waiting.length > 0) this.schedule()
      }
      void this.commitGroup(group, keys, release).finally(() => {
        this.running--
        release()
        if (this.waiting.length > 0) this.schedule()
      })
    }
  }

  /** How many of the first waiting transactions go together: those that begin alike, up to the limit. */
  private nextGroupSize(): number {
    const [first] = this.waiting
    if (!first || first.alone) return 1
    let size = 1
    while (size < Math.min(GROUP_LIMIT, this.waiting.length)) {
      const next = this.waiting[size]!
      if (next.alone || next.begin !== first.begin) break
      size++
    }
    return size
  }

  private async commitGroup(
    group: Grouped[],
    keys: readonly string[] = [],
    committing?: () => void,
  ): Promise<void> {
    this.counts.batches++
    this.counts.items += group.length
    const started = performance.now()
    try {
      await this.runGroup(group, keys, committing)
    } finally {
      const took = performance.now() - started
      const { timed } = this.options
      if (timed) for (const item of group) timed(started - item.at, took)
    }
  }

  /** `committing`: told once the group's commit is sent (or it failed first), while it holds its locks. */
  private async runGroup(group: Grouped[], keys: readonly string[], committing?: () => void): Promise<void> {
    const { backend, connect, guard, fatal, share } = this.options
    const { begin } = group[0]!
    const outcomes: ({ value: unknown } | { error: unknown })[] = []
    try {
      await guard(() =>
        connect(async (connection, ready) => {
          const run = (statement: string) => connection.executeQuery(CompiledQuery.raw(statement, []))
          const runAll = async (items: Grouped[], reruns: boolean) => {
            let scope: unknown
            if (ready && share) {
              // PostgreSQL's lock groups: the locks (`connect`), `begin` and the group's read go
              // to the connection one after the other, each sent by the driver as the one before
              // it is answered, not a turn of this thread's event loop later. The read still
              // follows the locks, so its snapshot does.
              const begun = run(begin)
              const opened = share.open(
                connection,
                items.map((item) => item.share),
              )
              const settled = await Promise.allSettled([ready, begun, opened])
              const failed = settled.find((outcome) => outcome.status === 'rejected')
              if (failed) {
                await run('rollback').catch(() => undefined)
                throw failed.reason
              }
              scope = (settled[2] as PromiseFulfilledResult<unknown>).value
            } else
              try {
                await run(begin)
              } catch (error) {
                // The connection can be left inside a transaction whose rollback failed (an I/O
                // error): end it, then begin again.
                if (!backend.stillInTransaction(error)) throw error
                await run('rollback')
                await run(begin)
              }
            const written = new Set<TableName>()
            try {
              if (share && !ready)
                scope = await share.open(
                  connection,
                  items.map((item) => item.share),
                )
              for (const item of items) {
                const attempt = reruns ? item.attempt + 1 : item.attempt
                outcomes.push({ value: await item.work(connection, attempt, written, scope) })
              }
              const closing = scope !== undefined ? share!.close(connection, scope) : undefined
              if (closing && !closing.sent) await closing.done
              // The commit right behind the write: if the write fails, the commit rolls back.
              const commitStarted = performance.now()
              const commit = run('commit').finally(() =>
                this.options.timedCommit?.(performance.now() - commitStarted),
              )
              committing?.()
              const [wrote, committed] = await Promise.allSettled([closing?.done, commit])
              if (wrote.status === 'rejected') throw wrote.reason
              if (committed.status === 'rejected') throw committed.reason
            } catch (error) {
              await run('rollback').catch(() => undefined)
              throw error
            } finally {
              // Still holding the connection: no read can slip in between the commit and this.
              this.options.committed(written)
            }
          }
          try {
            await runAll(group, false)
          } catch (error) {
            if (fatal(error)) throw error
            outcomes.length = 0
            if (group.length === 1) {
              outcomes.push({ error })
              return
            }
            // A function threw: everyone again, alone.
            for (const item of group)
              try {
                await runAll([item], true)
              } catch (alone) {
                if (fatal(alone)) throw alone
                outcomes.push({ error: alone })
              }
          }
        }, keys),
      )
    } catch (error) {
      for (const item of group) item.reject(error)
      return
    }
    group.forEach((item, index) => {
      const outcome = outcomes[index]!
      if ('error' in outcome) item.reject(outcome.error)
      else item.resolve(outcome.value)
    })
  }
}
