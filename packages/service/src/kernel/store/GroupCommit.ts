import { CompiledQuery, type DatabaseConnection } from 'kysely'
import { nextTurn } from '../base/async.ts'
import type { StoreBackend } from './backends/StoreBackend.ts'
import type { TableName } from './model.ts'

/** Most transactions committed together. */
const GROUP_LIMIT = 64

/**
 * How long a chain of lock groups keeps its locks (`lanes`, ms): past it, the chain's last group
 * gives them back, so another process waiting for one of them gets it (PostgreSQL grants advisory
 * locks in the order they were asked for), and this process's next group asks again.
 */
const CHAIN_MS = 100

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

/** The locks `connect` took for a group, which it gives back after the group unless given back before. */
export interface HeldLocks {
  /** Gives them back now: sent on the connection behind what was sent before (the commit). */
  unlock(): void
  /** Takes them again, if given back. */
  relock(): Promise<void>
}

/** What a group commit runs on, given by the store. */
export interface GroupCommitOptions {
  backend: StoreBackend
  /**
   * Lends the group a connection for `use`, with what it holds around the group (PostgreSQL: the
   * session locks the queue is for, taken before its `begin` and given back after its commit).
   */
  connect<R>(
    use: (connection: DatabaseConnection, ready?: Promise<unknown>, locks?: HeldLocks) => Promise<R>,
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
   * Awaited after each group (one group at a time, without `lanes`) before the next one starts:
   * a SQLite data dir's log sync (`LogSync`), so that groups stay as large as when the commit
   * itself waited for the disk, while the thread serves requests meanwhile.
   */
  between?(): Promise<void>
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
    /**
     * Groups may follow one another on a connection under the same locks (`lanes`; `GroupCommit`,
     * "chains"); each follower opens its own read (`open`) behind the commit before it.
     */
    chains?: boolean
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
  /** How long a chain keeps its locks, ms (`CHAIN_MS` unless set: a test that holds a group open longer). */
  chainMs?: number
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
  /**
   * Groups committed (or rolled back) so far, and the transactions they carried; of those groups,
   * how many followed another on its connection (a chain, `runGroup`), and how many followers were
   * abandoned because the group before them failed (their transactions queued again).
   */
  readonly counts = { batches: 0, items: 0, followed: 0, abandoned: 0 }

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
   * synchronous: it writes the group's pages to the log): a group that started in the first one's
   * microtasks would commit each transaction alone, its pages written once a request.
   *
   * On a data dir the next group then waits for the log sync that covers this one (`between`,
   * `LogSync`), with the thread free meanwhile: the groups stay as large as when the commit
   * itself waited for the disk (one sync for all that queued during the last one), but a slow
   * sync no longer holds every request's other work (issue 42: with the sync in the commit, a
   * slow disk stalled the thread, more requests queued into each group, and a group's larger
   * commit held it longer still). Letting groups run during a sync instead made them smaller
   * (about 2 transactions a commit instead of 4), with twice the commits for the same work.
   */
  private async commitGroups(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        await this.commitGroup(this.waiting.splice(0, this.nextGroupSize()))
        // A failed sync fails the group's transactions themselves (each waits for it too).
        await this.options.between?.().catch(() => undefined)
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
    const { waiting } = this
    while (this.running < lanes && waiting.length > 0) {
      const group: Grouped[] = []
      // The keys waiting are shared out over the free lanes: a group takes at most its share of
      // them (and every waiting transaction of those), so the transactions of many keys (many
      // organizations' signings) run in several groups at once rather than all in one.
      const waitingKeys = new Set<string>()
      for (const item of waiting) for (const key of item.keys) waitingKeys.add(key)
      const share = Math.max(1, Math.ceil(waitingKeys.size / (lanes - this.running)))
      const groupKeys = new Set<string>()
      // Keys a transaction left waiting names: those after it with one of them wait too (FIFO per key).
      const blocked = new Set<string>()
      // The queue is scanned once and compacted in place (those left waiting keep their order),
      // allocating nothing a transaction: it runs at every group's start and end, over every
      // transaction waiting, which under load is most of the clients.
      let kept = 0
      for (let index = 0; index < waiting.length; index++) {
        const item = waiting[index]!
        let free = true
        let added = 0
        for (const key of item.keys) {
          if (this.held.has(key) || blocked.has(key)) {
            free = false
            break
          }
          if (!groupKeys.has(key)) added++
        }
        const fits =
          free &&
          (group.length === 0 ||
            (!item.alone &&
              !group[0]!.alone &&
              item.begin === group[0]!.begin &&
              groupKeys.size + added <= share))
        if (fits) {
          group.push(item)
          for (const key of item.keys) groupKeys.add(key)
          // Full: the rest wait, in order.
          if (group.length === GROUP_LIMIT) {
            for (let rest = index + 1; rest < waiting.length; rest++) waiting[kept++] = waiting[rest]!
            break
          }
        } else {
          waiting[kept++] = item
          for (const key of item.keys) blocked.add(key)
        }
      }
      waiting.length = kept
      if (group.length === 0) break
      const keys = [...groupKeys].sort()
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
    await this.runGroup(group, keys, committing)
  }

  /**
   * Takes the waiting transactions that can follow a group of a chain holding `keys`, in order (up
   * to the limit): those that begin with `begin`, are not `alone`, and name only keys of `keys`
   * that no transaction left waiting before them names (a key's transactions stay in order).
   * With `peek`, says whether there is one, taking nothing.
   */
  private followers(keys: readonly string[], begin: string, peek = false): Grouped[] {
    const taken: Grouped[] = []
    const blocked = new Set<string>()
    const kept: Grouped[] = []
    for (const item of this.waiting) {
      const fits =
        taken.length < GROUP_LIMIT &&
        !item.alone &&
        item.begin === begin &&
        item.keys.length > 0 &&
        item.keys.every((key) => keys.includes(key) && !blocked.has(key))
      if (fits) {
        if (peek) return [item]
        taken.push(item)
      } else {
        kept.push(item)
        for (const key of item.keys) blocked.add(key)
      }
    }
    if (peek || taken.length === 0) return taken
    this.waiting.length = 0
    for (const item of kept) this.waiting.push(item)
    return taken
  }

  /**
   * `committing`: told once the group's commit is sent (or it failed first), while it holds its
   * locks; not told while the group is kept for a chain (below), whose end gives the locks back.
   *
   * **Chains** (lock groups, `lanes` with `share.chains`): when a group has sent its commit and
   * transactions of its keys wait, they form the next group at once, on the same connection under
   * the same locks, for up to `CHAIN_MS`. It sends its `begin` and its own read (`share.open`)
   * behind that commit, so it reads what the database holds once that group has committed: the
   * rows the locks order, and the rows they do not (a signing's policies and credential, which
   * another instance may change meanwhile: a follower deciding on the read of the group before it
   * once signed past a DENY committed before the signing was even sent). It runs its
   * transactions while the commit is on its way and sends its write and commit only once that
   * group has committed. If that group fails
   * instead, the follower is rolled back before that group's transactions rerun, and its own queue
   * again, first in line, as if it had never formed. So a key's transactions still run one group
   * after the other, each deciding on the commits before it, and a group's work overlaps the
   * commit (a disk's sync) of the one before instead of waiting for it, its unlock, the next lock
   * and a read.
   */
  private async runGroup(group: Grouped[], keys: readonly string[], committing?: () => void): Promise<void> {
    const { backend, connect, guard, fatal, share } = this.options
    const { begin } = group[0]!
    const chains = this.options.lanes !== undefined && share?.chains === true && keys.length > 0
    const chainEnds = performance.now() + (this.options.chainMs ?? CHAIN_MS)
    type Outcome = { value: unknown } | { error: unknown }
    // The group being run: a chain's follower once the group before it is answered.
    let current = group
    let outcomes: Outcome[] = []
    // When the group being run formed (its transactions' wait ends there).
    let started = performance.now()
    const answer = (error?: { error: unknown }) => {
      const { timed } = this.options
      const took = performance.now() - started
      current.forEach((item, index) => {
        timed?.(started - item.at, took)
        const outcome = error ?? outcomes[index]!
        if ('error' in outcome) item.reject(outcome.error)
        else item.resolve(outcome.value)
      })
    }
    try {
      await guard(() =>
        connect(async (connection, ready, locks) => {
          const run = (statement: string) => connection.executeQuery(CompiledQuery.raw(statement, []))
          /** A chain's next group, formed and running while the group before it commits. */
          interface Follower {
            items: Grouped[]
            formed: number
            scope: unknown
            written: Set<TableName>
            outcomes: Outcome[]
            /** Its `begin` and its transactions' work: the first error, or undefined. */
            worked: Promise<{ error: unknown } | undefined>
          }
          let follower: Follower | undefined
          const follow = (items: Grouped[], written: Set<TableName>): Follower => {
            const next: Follower = {
              items,
              formed: performance.now(),
              scope: undefined,
              written: new Set(written),
              outcomes: [],
              worked: Promise.resolve(undefined),
            }
            // Sent now, behind the commit on the connection: whatever the work sends comes after
            // it, so the work need not wait for its answer (nor for the commit's) to start. Its
            // read follows its `begin`, so it reads what the group before it committed.
            const begun = run(begin)
            begun.catch(() => undefined)
            next.worked = (async () => {
              try {
                next.scope = await share!.open(
                  connection,
                  items.map((item) => item.share),
                )
                for (const item of items)
                  next.outcomes.push({
                    value: await item.work(connection, item.attempt, next.written, next.scope),
                  })
                await begun
                return undefined
              } catch (error) {
                return { error }
              }
            })()
            return next
          }
          // A follower whose group before it failed: rolled back (it began after that group's
          // transaction ended), and its transactions first in line again.
          const abandon = async () => {
            const abandoned = follower
            follower = undefined
            if (!abandoned) return
            await abandoned.worked
            await run('rollback').catch(() => undefined)
            this.counts.abandoned++
            this.waiting.unshift(...abandoned.items)
          }
          // The rest of a group's open transaction: on a failure, any follower formed on it is
          // abandoned and the transaction rolled back. Either way the tables it wrote are told
          // while the connection is still held: no read can slip in between the commit and this.
          const inTransaction = async (written: Set<TableName>, body: () => Promise<void>) => {
            try {
              await body()
            } catch (error) {
              await abandon()
              await run('rollback').catch(() => undefined)
              throw error
            } finally {
              this.options.committed(written)
            }
          }
          // The group's write and commit, in its open transaction; a follower forms if it may.
          const finish = async (reruns: boolean, scope: unknown, written: Set<TableName>) => {
            const closing = scope !== undefined ? share!.close(connection, scope) : undefined
            if (closing && !closing.sent) await closing.done
            // The commit right behind the write: if the write fails, the commit rolls back.
            const commitStarted = performance.now()
            const commit = run('commit').finally(() =>
              this.options.timedCommit?.(performance.now() - commitStarted),
            )
            const next =
              chains && !reruns && scope !== undefined && performance.now() < chainEnds
                ? this.followers(keys, begin)
                : []
            if (next.length > 0) follower = follow(next, written)
            else {
              committing?.()
              // The locks go back right behind the commit, in its write to the socket: the
              // database runs the unlock once the commit is done, so the next holder reads what
              // it wrote, a round trip sooner than once the commit is answered. A rerun (below)
              // takes them again.
              if (!reruns) locks?.unlock()
            }
            const [wrote, committed] = await Promise.allSettled([closing?.done, commit])
            if (wrote.status === 'rejected') throw wrote.reason
            if (committed.status === 'rejected') throw committed.reason
          }
          const runAll = async (items: Grouped[], reruns: boolean) => {
            let scope: unknown
            if (ready && share) {
              // PostgreSQL's lock groups: the locks (`connect`), `begin` and the group's read go
              // to the connection at once, pipelined (`openPostgres`): one round trip for the
              // three. The database runs them in order, so the read still follows the locks, and
              // its snapshot does.
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
            await inTransaction(written, async () => {
              if (share && !ready)
                scope = await share.open(
                  connection,
                  items.map((item) => item.share),
                )
              for (const item of items) {
                const attempt = reruns ? item.attempt + 1 : item.attempt
                outcomes.push({ value: await item.work(connection, attempt, written, scope) })
              }
              await finish(reruns, scope, written)
            })
          }
          // A follower, once the group before it committed: its write and commit.
          const runFollower = (next: Follower) =>
            inTransaction(next.written, async () => {
              const failed = await next.worked
              if (failed) throw failed.error
              await finish(false, next.scope, next.written)
            })
          // The group, then its followers; each answered once committed.
          for (let next: Follower | undefined; ; ) {
            try {
              if (next) await runFollower(next)
              else await runAll(current, false)
            } catch (error) {
              if (fatal(error)) throw error
              outcomes = []
              if (current.length === 1) outcomes.push({ error })
              // A function threw: everyone again, alone, under the locks again if the failed
              // commit had given them back.
              else {
                await locks?.relock()
                for (const item of current)
                  try {
                    await runAll([item], true)
                  } catch (alone) {
                    if (fatal(alone)) throw alone
                    outcomes.push({ error: alone })
                  }
              }
            }
            next = follower
            follower = undefined
            if (!next) return
            answer()
            current = next.items
            outcomes = next.outcomes
            started = next.formed
            this.counts.batches++
            this.counts.items += next.items.length
            this.counts.followed++
          }
        }, keys),
      )
    } catch (error) {
      // The database failed: nobody of the group it failed in is acknowledged.
      answer({ error })
      return
    }
    answer()
  }
}
