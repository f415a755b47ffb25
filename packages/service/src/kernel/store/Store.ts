import { CompiledQuery, type DatabaseConnection, type Kysely } from 'kysely'
import { ApiError, ConflictError } from '../base/errors.ts'
import { type EventSink, silentSink } from '../base/events.ts'
import type { StageTimings } from '../StageTimings.ts'
import type { BucketCharge, BucketState, StoreBackend } from './backends/StoreBackend.ts'
import { Coalescer } from './Coalescer.ts'
import type { Database } from './Database.ts'
import { classify, describeCause, unavailable, unavailableCause } from './databaseErrors.ts'
import { GroupCommit, type GroupWork } from './GroupCommit.ts'
import { rememberKysely } from './kyselyOf.ts'
import type { LogSync } from './LogSync.ts'
import { knownMigrations, type MigrateOptions, migrateSchema, recordedMigrations } from './migrations.ts'
import { INDEXES, type TableName, type Tables } from './model.ts'
import { Prefetched } from './Prefetched.ts'
import { type Execute, indexed, type PageByOptions, Queries, type RowValues } from './Queries.ts'
import { ReadCache } from './ReadCache.ts'
import type { Lookup, Reads } from './Reads.ts'
import { replaceRows, SharedAhead, Transaction } from './Transaction.ts'

// The store's surface, as the rest of the service imports it.
export type { BucketCharge, BucketState } from './backends/StoreBackend.ts'
export type { Database } from './Database.ts'
export { isDatabaseError, unavailable, unavailableCause } from './databaseErrors.ts'
export type { Prefetched } from './Prefetched.ts'
export { anyRows, type Lookup, type Reads } from './Reads.ts'
export { NotInSnapshot, Transaction } from './Transaction.ts'

/** Where the database's schema stands against this version's migrations (`Store.migrationState`). */
export interface MigrationState {
  /** The migrations applied to the database, by name. */
  applied: string[]
  /** The migrations this version knows, in the order they apply. */
  known: string[]
  /** Every known migration is applied, and none this version does not know. */
  current: boolean
}

/** A snapshot run's rows, and the organization they belong to (`TransactionOptions.owner`). */
interface OwnedRows {
  rows: RowValues[]
  owner: string | undefined
}

/** How a transaction is isolated (`Store.transaction`'s `isolation`). */
export type Isolation = 'serializable' | 'snapshot'

/** Connections of a pool: open, idle among them, requests waiting for one, and the most it opens. */
export interface PoolUse {
  total: number
  idle: number
  waiting: number
  max: number
}

/**
 * How requests are merged where the backend `batchesRequests`: one statement of each kind on its
 * way at a time, so that the requests arriving meanwhile go together in the next (on the bench,
 * two at a time signed 0.8 times as fast, four 0.9 times); at most 64 requests in one.
 */
const BATCHING = { inFlight: 1, limit: 64 }

/**
 * When at least `requests` requests are being served (`Store.watchLoad`), a statement waits for up
 * to `fill` requests, at most `ms`, and never longer than one recent statement's round trip nor
 * while the database has nothing else on its way (`lingerRule`, issue 42): a service that is that busy is
 * bound by CPU, and each statement costs its process and PostgreSQL's far more CPU than a row in
 * it (a round trip wakes the other side). Slow requests (`create_wallet`, ~7 ms of derivation
 * each) otherwise reach the store one by one and go alone: on the bench's 200 clients, 1.3 wallets
 * a statement without the wait, 5.0–5.2 reads and 3.2 inserts with it, at 1.0–1.3 fewer ms of
 * service CPU and 0.4 fewer of PostgreSQL's a wallet (`bench/README.md`). Quieter, nothing waits.
 */
const LINGER = { requests: 32, ms: 40, fill: 8 }

/** Refuses a lookup by a field that has no index (`indexed`). */
function checkLookups(lookups: readonly Lookup[]): void {
  for (const lookup of lookups)
    if ('from' in lookup) {
      indexed(lookup.table, lookup.field)
      indexed(lookup.from.table, lookup.from.column)
    } else if ('field' in lookup) indexed(lookup.table, lookup.field)
    else if ('via' in lookup) {
      indexed(lookup.via.table, lookup.via.field)
      indexed(lookup.via.table, lookup.via.column)
    }
}

const isUnavailable = (error: unknown) =>
  error instanceof ApiError && error.errorCode === 'STORAGE_UNAVAILABLE'

/**
 * The service's data, in SQLite or PostgreSQL through Kysely, written once against
 * `StoreBackend`. Reads outside a transaction see committed rows; `transaction` runs a function
 * in one database transaction (SERIALIZABLE on PostgreSQL, retried on serialization failures, so
 * it must not call out or have effects outside the database), committing only if it resolves.
 * When the database cannot take a request, the caller gets `STORAGE_UNAVAILABLE` (HTTP 503) and
 * nothing was acknowledged.
 *
 * On SQLite the one connection serialises transactions: never read through the store (rather than
 * the transaction) inside a transaction, and never open a transaction inside another.
 */
/** Lock groups that may run at once, each on a connection of its own (`Store.lockGroup`). */
const LOCK_LANES = 4

/** How `Store.transaction` runs its function. */
export interface TransactionOptions {
  snapshot?: Reads
  /**
   * Names whose transactions run one at a time across every process of the database: each is
   * taken (in sorted order) before `begin`, so the transaction's snapshot follows the last
   * holder's commit, and given back after it (`StoreBackend.sessionLocks`; elsewhere ignored).
   * In the process, the transactions naming the same locks queue for them, and those that
   * queued while a group held them run as the next group (`GroupCommit`): one transaction on
   * one connection, the locks taken once before its `begin` and given back after its one
   * commit, each function seeing the writes of those before it. A `snapshot` transaction
   * reads ahead after them; a SERIALIZABLE one runs in a group of its own.
   */
  locks?: readonly string[]
  /**
   * `snapshot`: the transaction reads one snapshot, taken after its `locks`, and takes no
   * predicate locks (PostgreSQL's REPEATABLE READ, `StoreBackend.beginSnapshot`), so it never
   * fails a commit of a transaction that wrote none of its rows, nor is failed by one. For a
   * function that is content with a snapshot (as a snapshot run is) and whose every write but
   * new rows is ordered by `locks` in every writer: a write skew is then impossible, and two
   * writers of one row that were not ordered still conflict (rerun), never lose an update.
   * Default `serializable`. Where one connection runs every transaction (SQLite), the same.
   */
  isolation?: Isolation
  /**
   * Read again, where the backend `readsAhead`, as the transaction's first statement after
   * `begin` (so as of its snapshot), all in one statement on its connection: its reads of a
   * table it has not written are answered from what this found, and go to the database when
   * it found nothing for them (a lookup not asked for). One round trip where a transaction
   * that holds its `locks` would make one for each read (a signing under a spending limit:
   * its organization's limits and usage rows). Not for a SERIALIZABLE transaction
   * (its reads would take predicate locks on rows it may never have needed). Such a
   * transaction also keeps its writes and sends them together, replacing rows by id, before
   * a statement that could see them and before its commit (`Transaction`'s `defersWrites`).
   */
  readAhead?: readonly Lookup[]
  /**
   * A snapshot run's organization (`snapshot`): the one its new rows belong to, which it decided
   * on as of its snapshot. Its rows go in only while that organization's row exists, by one
   * statement that also rewrites the row unchanged (`Queries.insertOwned`): a transaction that
   * deletes the organization (`delete_sub_organization`) either committed first, and nothing goes
   * in (`fn` runs again in a transaction, which sees it gone), or began before and conflicts on the
   * row when it deletes it (rerun, it sees the new rows). Without it a run decided as of its
   * snapshot could add rows to an organization deleted since. Where there is no snapshot run
   * (SQLite, a rerun) the transaction reads what it decides on, and this is not needed.
   */
  owner?: string
}

export class Store implements Reads {
  private closed = false
  /** Where reruns and outages are reported (`observe`). */
  private events: EventSink = silentSink
  /** Requests being served now (`watchLoad`). */
  private load: () => number = () => 0
  /** Where the waits for a shared statement or a commit group are counted (`timeStages`). */
  private timings: StageTimings | undefined
  /** A data dir's log, synced off the thread before a commit is answered (`syncsLog`). */
  private logSync: LogSync | undefined
  /** The connection pool's use right now, where the database has a pool (PostgreSQL). */
  poolUse: (() => PoolUse) | undefined
  /** The migrations `open` applied (none when the schema was current). */
  migrated: readonly string[] = []

  private readonly queries: Queries
  /** Committed reads: each query takes a connection from Kysely and gives it back. */
  private readonly execute: Execute
  /** Committed documents read outside transactions, where the backend allows (`cachesReads`). */
  private readonly cache: ReadCache | undefined
  /** Where the backend has one connection (`groupsCommits`): the transactions queued for it. */
  private readonly groups: GroupCommit | undefined
  /** Where the backend has `sessionLocks` (PostgreSQL): the transactions of this process that name `locks` (`lockGroups`). */
  private readonly lockGroups: GroupCommit | undefined
  /** Where the backend `batchesRequests`: concurrent requests' reads ahead, one statement a batch. */
  private readonly lookups: Coalescer<Lookup[], Map<string, string[]>> | undefined
  /**
   * Where the backend `batchesRequests`: concurrent snapshot runs' inserts, one statement a batch;
   * each answered whether its rows went in (`TransactionOptions.owner`).
   */
  private readonly inserts: Coalescer<OwnedRows, boolean> | undefined

  private constructor(
    /** Reached only by the store's own files (`kyselyOf`): the rest uses the named operations. */
    private readonly db: Kysely<Database>,
    /** The database under the store: what it caches, how it begins and retries transactions. */
    readonly backend: StoreBackend,
    private readonly onClose: () => Promise<void> | void,
    /** How long a chain of lock groups may keep its locks, ms (`GroupCommit`'s `chainMs`). */
    private readonly lockChainMs?: number,
  ) {
    if ((backend.readsAhead || backend.writesAtOnce) && !backend.arrays)
      throw new Error(`${backend.name} reads ahead or writes at once without array statements`)
    rememberKysely(this, db)
    this.queries = new Queries(db, backend)
    this.execute = (query) => db.executeQuery<Record<string, unknown>>(query)
    this.cache = backend.cachesReads ? new ReadCache() : undefined
    this.groups = backend.groupsCommits
      ? new GroupCommit({
          ...this.groupOptions(),
          connect: (use) => db.getExecutor().provideConnection(use),
          begin: backend.begin,
          // SQLite: a unique violation or a busy database fails the whole group (each reruns).
          fatal: (error) => classify(backend, error) !== 'other',
        })
      : undefined
    this.lockGroups = backend.sessionLocks ? this.openLockGroups(backend.sessionLocks) : undefined
    if (backend.batchesRequests) {
      const shared = (error: unknown) => classify(backend, error) === 'unavailable'
      const linger = () => (this.load() >= LINGER.requests ? LINGER.ms : 0)
      // Another statement or a transaction holds a connection: the database is not idle.
      const busy = () => {
        const pool = this.poolUse?.()
        return pool ? pool.total - pool.idle > 0 : true
      }
      const timed = (waited: number, took: number) => {
        this.timings?.record('statement wait', waited)
        this.timings?.record('statement', took)
      }
      this.lookups = new Coalescer({
        many: async (batches) => {
          const found = await this.queries.lookupMany(this.execute, batches.flat())
          return batches.map(() => found)
        },
        one: (lookups) => this.queries.lookupMany(this.execute, lookups),
        shared,
        ...BATCHING,
        linger,
        fill: LINGER.fill,
        busy,
        timed,
      })
      this.inserts = new Coalescer({
        many: (batches) => this.insertRows(batches),
        one: async (batch) => (await this.insertRows([batch]))[0]!,
        shared,
        ...BATCHING,
        linger,
        fill: LINGER.fill,
        busy,
        timed,
      })
    }
  }

  /**
   * Work merged so far, as batches and the requests they carried: PostgreSQL's reads ahead and
   * inserts (one statement a batch), SQLite's transactions (one commit a group).
   */
  batching(): Partial<
    Record<
      'lookups' | 'inserts' | 'commits',
      {
        batches: number
        items: number
        /** PostgreSQL's lock groups: groups that followed another on its connection, followers abandoned (`GroupCommit`). */
        followed?: number
        abandoned?: number
      }
    >
  > {
    return {
      ...(this.lookups ? { lookups: { ...this.lookups.counts } } : {}),
      ...(this.inserts ? { inserts: { ...this.inserts.counts } } : {}),
      ...(this.groups ? { commits: { ...this.groups.counts } } : {}),
      ...(this.lockGroups ? { commits: { ...this.lockGroups.counts } } : {}),
    }
  }

  /** What every group commit of the store shares: how it reports, counts its waits, guards its calls. */
  private groupOptions() {
    return {
      backend: this.backend,
      committed: (tables: Set<TableName>) => {
        this.cache?.committed(tables)
        this.logSync?.committed()
      },
      guard: <R>(run: () => Promise<R>) => this.guard(run),
      timed: (waited: number, took: number) => {
        this.timings?.record('commit wait', waited)
        this.timings?.record('commit group', took)
      },
      timedCommit: (took: number) => this.timings?.record('commit', took),
      between: () => this.logSync?.settled() ?? Promise.resolve(),
    }
  }

  /**
   * The queue of this process's transactions that name `locks`, on a backend with `sessionLocks`
   * (PostgreSQL): they run in groups (`GroupCommit`), each group one database transaction on one
   * connection that holds the locks of all its transactions from before its `begin` until after
   * its commit, and up to `LOCK_LANES` groups at once. The transactions of one lock run one after
   * the other, in the order they came; those of different locks (one organization's signings
   * under its spending limits and another's) share a group, or run in another beside it. So a
   * group pays one lock, begin, read, write, commit (one fsync) and unlock for all its
   * transactions, whichever organizations they are of.
   */
  private openLockGroups(sessionLocks: NonNullable<StoreBackend['sessionLocks']>): GroupCommit {
    return new GroupCommit({
      ...this.groupOptions(),
      ...(this.lockChainMs === undefined ? {} : { chainMs: this.lockChainMs }),
      connect: (use, held) =>
        this.db.getExecutor().provideConnection(async (connection) => {
          const statement = (text: string) => connection.executeQuery(CompiledQuery.raw(text, [[...held]]))
          let locked = held.length > 0
          // A lock not given back would outlive the request on a pooled connection: if giving it
          // back fails, the connection is broken anyway and its locks end with its session. Not
          // awaited: the connection runs it before anything its next user sends (the driver
          // sends statements in order), and another holder's lock statement waits for it in the
          // database. Every name, even where the lock statement failed part way: giving back one
          // not held only warns.
          const unlock = () => {
            if (!locked) return
            locked = false
            statement(sessionLocks.unlock).catch(() => undefined)
          }
          try {
            // In sorted order (`held` is), so two holders never wait for each other's; in one
            // statement, one round trip however many organizations the group holds. Not awaited
            // here: the group sends its `begin` and read right behind (`ready`), and waits for
            // all three. The group gives the locks back itself once its commit is sent
            // (`HeldLocks`), and takes them again if it must rerun.
            const ready = locked ? statement(sessionLocks.lock) : Promise.resolve()
            // Failures are the group's to see (it waits for `ready`); none is left unhandled.
            ready.catch(() => undefined)
            return await use(connection, ready, {
              unlock,
              relock: async () => {
                if (locked || held.length === 0) return
                locked = true
                await statement(sessionLocks.lock)
              },
            })
          } finally {
            unlock()
          }
        }),
      begin: this.backend.beginSnapshot ?? this.backend.begin,
      // A conflict or a unique violation is one transaction's: the others commit, it reruns alone.
      fatal: (error) => classify(this.backend, error) === 'unavailable' || isUnavailable(error),
      lanes: LOCK_LANES,
      // Those that read ahead read together, in the group's first statement after its `begin`,
      // and write together, before its commit (`SharedAhead`).
      share: {
        open: async (connection, shares) => {
          const lookups = (shares as (readonly Lookup[] | undefined)[]).flatMap((share) => share ?? [])
          if (lookups.length === 0) return undefined
          // With the rows' ids: a read of a table the group wrote finds which rows it changed
          // without parsing what was read (`Transaction`'s `sharedAhead`).
          const ids = new Map<string[], string[]>()
          const found = await this.queries.lookupMany(
            (query) => connection.executeQuery<Record<string, unknown>>(query),
            lookups,
            ids,
          )
          return new SharedAhead(found, ids)
        },
        close: (connection, scope) => {
          const rows = (scope as SharedAhead).pending.splice(0)
          // The write's statement is sent synchronously, unless building it failed (then the
          // group waits for that failure before any commit).
          let sent = rows.length === 0
          const done = replaceRows(
            this.queries,
            (query) => {
              sent = true
              return connection.executeQuery<Record<string, unknown>>(query)
            },
            rows,
          )
          return { done, sent }
        },
        chains: true,
      },
    })
  }

  /**
   * Opens the store on a Kysely instance and brings its schema to the latest version (or, with
   * `migrate: false`, refuses a schema that is behind); a schema migrated by a newer version is
   * refused either way (see `migrateSchema`).
   */
  static async open(
    db: Kysely<Database>,
    backend: StoreBackend,
    onClose: () => Promise<void> | void = () => db.destroy(),
    options: MigrateOptions & { lockChainMs?: number } = {},
  ): Promise<Store> {
    const store = new Store(db, backend, onClose, options.lockChainMs)
    store.migrated = await migrateSchema(db as Kysely<unknown>, backend, options)
    return store
  }

  private async guard<R>(run: () => Promise<R>): Promise<R> {
    if (this.closed) throw unavailable(new Error('store closed'))
    if (this.logSync?.failed !== undefined) throw unavailable(this.logSync.failed)
    try {
      return await run()
    } catch (error) {
      if (error instanceof ApiError) throw error
      if (classify(this.backend, error) === 'unavailable') throw unavailable(error)
      throw error
    }
  }

  get<T extends TableName>(table: T, id: string): Promise<Tables[T] | undefined> {
    return this.guard(() => this.queries.get(this.execute, table, id, this.cache))
  }

  findBy<T extends TableName>(
    table: T,
    field: keyof Tables[T] & string,
    value: unknown,
  ): Promise<Tables[T][]> {
    return this.guard(() => this.queries.findBy(this.execute, table, { field, value }, this.cache))
  }

  all<T extends TableName>(table: T) {
    return this.guard(() => this.queries.all(this.execute, table))
  }

  count<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown) {
    return this.guard(() => this.queries.count(this.execute, table, field, value))
  }

  /**
   * Up to `limit` committed rows of `table` whose ids come after `afterId`, in id order: a walk
   * through a whole table (a key rotation's) resumes after the last id of its previous step.
   */
  page<T extends TableName>(table: T, options: { afterId: string; limit: number }): Promise<Tables[T][]> {
    return this.guard(() => this.queries.page(this.execute, table, options))
  }

  /**
   * Up to `limit` committed rows of `table` whose indexed `field` is `value`, in the order of the
   * indexed column `by` (as text; ascending, or `descending`), from just past `after` (a
   * value of `by`): a keyset page, which an index on (field, by) answers without reading the rows
   * before it (webhook deliveries by endpoint and `listKey`).
   */
  pageBy<T extends TableName>(table: T, options: PageByOptions<T>): Promise<Tables[T][]> {
    return this.guard(() => this.queries.pageBy(this.execute, table, options))
  }

  /**
   * Where the schema stands: the migrations applied and known (a trivial query, so also whether
   * the database answers: a database that cannot is `STORAGE_UNAVAILABLE`).
   */
  migrationState(): Promise<MigrationState> {
    return this.guard(async () => {
      const applied = await recordedMigrations(this.db as Kysely<unknown>)
      const known = knownMigrations(this.backend)
      const current = known.length === applied.length && known.every((name) => applied.includes(name))
      return { applied, known, current }
    })
  }

  /**
   * Charges one request to each of `charges`' shared rate-limit buckets (table `rateLimitBuckets`,
   * for every instance on the database) in one statement, in autocommit, outside any
   * transaction: each let in or refused atomically (`StoreBackend.chargeBuckets`). Rows are
   * charged in key order, so two requests charging the same buckets lock them in the same order.
   */
  chargeBuckets(charges: readonly BucketCharge[], now: number): Promise<BucketState[]> {
    const sorted = [...charges].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    return this.guard(async () => {
      const { rows } = await this.backend.chargeBuckets(sorted, now).execute(this.db)
      return rows.map((row) => ({ key: row.key, tat: Number(row.tat), allowed: Boolean(row.allowed) }))
    })
  }

  /** Deletes the rate-limit buckets idle since before `idleBefore` (their `tat` is past it). */
  async sweepBuckets(idleBefore: number): Promise<void> {
    await this.guard(() => this.backend.sweepBuckets(idleBefore).execute(this.db))
  }

  /**
   * Rewrites the database's files so that overwritten and deleted data leaves them (after a key
   * rotation: the old ciphertexts), where the backend can (`StoreBackend.compact`: SQLite); false
   * where it cannot, so the caller tells the operator. Run it with nothing else writing.
   */
  async compact(): Promise<boolean> {
    if (this.backend.compact.length === 0) return false
    await this.guard(async () => {
      for (const statement of this.backend.compact)
        await this.db.executeQuery(CompiledQuery.raw(statement, []))
    })
    return true
  }

  /**
   * Writes a consistent copy of the whole database to the new file `file`, as of one instant,
   * where the backend can (`StoreBackend.copyInto`: SQLite); see `backupDatabase`.
   */
  async copyInto(file: string): Promise<void> {
    const copy = this.backend.copyInto
    if (!copy) throw new Error(`${this.backend.name} is copied by its own tools, not by the store`)
    await this.guard(() => copy(file).execute(this.db))
  }

  /**
   * Reads `lookups` now, as committed, and answers later reads of them from what was read: a
   * request's first reads (its credential, caller and organization), which its code makes one
   * after the other, cost one round trip instead of one each, where the backend reads ahead
   * (`readsAhead`). Elsewhere the reads are made as they come (through the read cache), so they
   * are as of then.
   */
  async prefetch(lookups: Lookup[]): Promise<Prefetched> {
    checkLookups(lookups)
    if (!this.backend.readsAhead || lookups.length === 0) return new Prefetched(this, new Map())
    return this.guard(async () => {
      const found = this.lookups
        ? await this.lookups.run(lookups)
        : await this.queries.lookupMany(this.execute, lookups)
      return new Prefetched(this, found)
    })
  }

  /**
   * Runs `fn` in one transaction and commits if it resolves. On PostgreSQL it is SERIALIZABLE
   * (unless `isolation` says otherwise): a conflict with a concurrent transaction (on this instance
   * or another) reruns `fn` from the start, up to a bound, so `fn` sees either all or none of every
   * other transaction's writes.
   *
   * With `snapshot` (what `prefetch` read), where the backend `writesAtOnce`, the first run is a
   * snapshot run instead: `fn` reads only from those rows, all read by one statement, and its
   * writes, inserts only, are sent together as one statement when it resolves, with no
   * transaction around them: two round trips in all. That is for a function whose writes are new
   * rows nobody else's decision reads (an activity's own record) and which is content with the
   * snapshot as of the prefetch, as a REPEATABLE READ transaction would be. A read the snapshot
   * cannot answer, a delete or a savepoint drops the run and `fn` runs again in a transaction; so
   * does a write that meets an existing row (a replay's fingerprint), as a rerun after a conflict.
   */
  async transaction<R>(
    fn: (tx: Transaction) => Promise<R> | R,
    options: TransactionOptions = {},
  ): Promise<R> {
    const value = await this.unsettled(fn, options)
    // On a data dir, the commit is in SQLite's log: answered once the log is on disk (`LogSync`).
    if (this.logSync) await this.settled()
    return value
  }

  /** `transaction`, resolved as soon as it committed (on a data dir, before its log is synced). */
  private async unsettled<R>(
    fn: (tx: Transaction) => Promise<R> | R,
    options: TransactionOptions,
  ): Promise<R> {
    const readAhead =
      this.backend.readsAhead && options.isolation === 'snapshot' && options.readAhead?.length
        ? options.readAhead
        : []
    checkLookups(readAhead)
    // Taken in sorted order, so two transactions never wait for each other's.
    const held = this.backend.sessionLocks ? [...new Set(options.locks ?? [])].sort() : []
    const snapshot =
      this.backend.writesAtOnce && options.snapshot instanceof Prefetched
        ? options.snapshot.alone()
        : undefined
    for (let attempt = 1; ; attempt++) {
      try {
        if (snapshot && attempt === 1) {
          const done = await this.guard(() => this.atOnce(fn, snapshot, options.owner))
          if (done) return done.value
        }
        if (this.groups) {
          if (this.closed) throw unavailable(new Error('store closed'))
          return await this.groups.run(this.work(fn), attempt)
        }
        if (held.length > 0) {
          if (this.closed) throw unavailable(new Error('store closed'))
          // A SERIALIZABLE transaction (a send) runs in a group of its own: it would widen a
          // group's predicate locks to every member's reads, and fail all of them on a conflict.
          return await this.lockGroups!.run<R>(
            this.work(fn, { held, readAhead }),
            attempt,
            options.isolation === 'snapshot'
              ? { keys: held, share: readAhead.length > 0 ? readAhead : undefined }
              : { keys: held, begin: this.backend.begin, alone: true },
          )
        }
        return await this.guard(() => this.alone(fn, { attempt, isolation: options.isolation, readAhead }))
      } catch (error) {
        const kind = classify(this.backend, error)
        if ((kind === 'retry' || kind === 'unique') && attempt < this.backend.maxAttempts) {
          this.events.emit('store.retry', { reason: kind === 'retry' ? 'conflict' : 'unique' })
          // Back off with jitter, longer each time (up to 100 ms), so the transactions that
          // collided do not collide again.
          await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(100, 2 ** attempt)))
          continue
        }
        if (kind === 'retry' || kind === 'unavailable' || isUnavailable(error))
          this.events.emit('store.unavailable', {
            cause:
              kind === 'retry'
                ? `conflicts past ${attempt} runs: ${describeCause(error)}`
                : (unavailableCause(error) ?? describeCause(error)),
          })
        if (kind === 'retry') throw unavailable(error)
        if (kind === 'unique')
          throw new ConflictError({ message: 'a concurrent request created the same record' })
        throw error
      }
    }
  }

  /**
   * The rows of snapshot runs, in one statement, and whether each run's went in: all of them, or
   * (when a run names its `owner`) those whose organization still exists (`insertOwned`).
   */
  private async insertRows(batches: readonly OwnedRows[]): Promise<boolean[]> {
    const rows = batches.length === 1 ? batches[0]!.rows : batches.flatMap((batch) => batch.rows)
    if (batches.every((batch) => batch.owner === undefined)) {
      await this.queries.insertMany(this.execute, rows)
      return batches.map(() => true)
    }
    const owners = batches.flatMap((batch) => batch.rows.map(() => batch.owner ?? null))
    const found = await this.queries.insertOwned(this.execute, rows, { table: 'organizations', owners })
    return batches.map((batch) => batch.owner === undefined || found.has(batch.owner))
  }

  /**
   * A snapshot run of `fn` (see `transaction`): its value once its writes are sent, or undefined
   * when it needed more than the snapshot, or its `owner` was gone (nothing was written).
   */
  private async atOnce<R>(
    fn: (tx: Transaction) => Promise<R> | R,
    snapshot: Reads,
    owner: string | undefined,
  ): Promise<{ value: R } | undefined> {
    const tx = new Transaction({
      execute: this.execute,
      backend: this.backend,
      queries: this.queries,
      attempt: 1,
      written: new Set(),
      snapshot,
      insert: (rows: RowValues[]) =>
        this.inserts
          ? this.inserts.run({ rows, owner })
          : this.insertRows([{ rows, owner }]).then(([went]) => went!),
    })
    let value: R
    try {
      value = await fn(tx)
    } catch (error) {
      if (tx.missed) return undefined
      throw error
    }
    if (tx.missed) return undefined
    await tx.flush()
    return tx.missed ? undefined : { value }
  }

  /** `fn` in a database transaction of its own, on one connection, every statement sent straight to it. */
  private alone<R>(
    fn: (tx: Transaction) => Promise<R> | R,
    {
      attempt,
      isolation,
      readAhead,
    }: {
      attempt: number
      isolation: Isolation | undefined
      readAhead: readonly Lookup[]
    },
  ): Promise<R> {
    return this.db.getExecutor().provideConnection(async (connection) => {
      const run = (statement: string) => connection.executeQuery(CompiledQuery.raw(statement, []))
      const written = new Set<TableName>()
      await run((isolation === 'snapshot' && this.backend.beginSnapshot) || this.backend.begin)
      try {
        let result: R
        try {
          result = (await this.work(fn, { readAhead })(connection, attempt, written)) as R
        } catch (error) {
          await run('rollback').catch(() => undefined)
          throw error
        }
        const commitStarted = performance.now()
        try {
          await run('commit')
          this.timings?.record('commit', performance.now() - commitStarted)
        } catch (error) {
          await run('rollback').catch(() => undefined)
          throw error
        }
        return result
      } finally {
        // Before the caller hears back: a read made after the transaction resolves sees the commit.
        this.cache?.committed(written)
        this.logSync?.committed()
      }
    })
  }

  /**
   * One run of `fn` inside a database transaction begun on the connection it is given: what it
   * reads first (`transaction`'s `readAhead`, in one statement, as of what the transaction has
   * seen so far), `fn` itself, then the writes it kept, in one statement.
   */
  private work<R>(
    fn: (tx: Transaction) => Promise<R> | R,
    {
      held = [],
      readAhead = [],
    }: {
      /** The locks the connection holds for this transaction (`Transaction.holds`). */
      held?: readonly string[]
      readAhead?: readonly Lookup[]
    } = {},
  ): GroupWork {
    return async (connection, attempt, written, scope) => {
      // In a group that read ahead for all of its transactions, this one reads from that.
      const shared = scope instanceof SharedAhead && readAhead.length > 0 ? scope : undefined
      const ahead =
        readAhead.length > 0 && !shared
          ? await this.queries.lookupMany(
              (query) => connection.executeQuery<Record<string, unknown>>(query),
              readAhead,
            )
          : undefined
      const tx = this.transactionOn(connection, attempt, written, {
        held: new Set(held),
        ...(ahead ? { ahead } : {}),
        ...(shared ? { shared } : {}),
      })
      const result = await fn(tx)
      // What a transaction that read ahead kept of its writes, in one statement (in a shared
      // group, handed to the group, which sends them before its commit).
      await tx.flush()
      return result
    }
  }

  private transactionOn(
    connection: DatabaseConnection,
    attempt: number,
    written: Set<TableName>,
    {
      held = new Set(),
      ahead,
      shared,
    }: {
      held?: Set<string>
      ahead?: ReadonlyMap<string, string[]>
      shared?: SharedAhead
    } = {},
  ) {
    return new Transaction({
      execute: (query) => connection.executeQuery<Record<string, unknown>>(query),
      backend: this.backend,
      queries: this.queries,
      attempt,
      written,
      held,
      ...(this.cache ? { cache: this.cache } : {}),
      ...(ahead ? { ahead, defersWrites: true } : {}),
      ...(shared ? { ahead: shared.ahead, shared, defersWrites: true } : {}),
    })
  }

  /**
   * How many requests the service is serving now: under heavy load, statements wait a little for
   * more requests to share them (`LINGER`).
   */
  watchLoad(requests: () => number): void {
    this.load = requests
  }

  /** How many requests the service is serving now (`watchLoad`; 0 where no server watches): background work yields to them. */
  requestsInFlight(): number {
    return this.load()
  }

  /**
   * Commits go to SQLite's log unsynced (`synchronous = NORMAL`), and each transaction is answered
   * once `sync` has the log on disk (`LogSync`): the thread that serves requests never waits for
   * the disk. Set by `openDataDir`, before anything is served.
   */
  syncsLog(sync: LogSync): void {
    this.logSync = sync
  }

  /**
   * Resolves once every commit made so far is on disk (at once, but on a data dir with commits
   * not yet synced). What an answer waits for before it goes out, so that no one is told of a
   * commit a power loss could still undo. A log that could not be synced: STORAGE_UNAVAILABLE.
   */
  async settled(): Promise<void> {
    if (!this.logSync) return
    try {
      await this.logSync.settled()
    } catch (error) {
      throw unavailable(error)
    }
  }

  /** Counts the waits for shared statements and commit groups, and their time, in `timings`. */
  timeStages(timings: StageTimings): void {
    this.timings = timings
  }

  /** Reports transaction reruns and outages to `sink` (the service's events). */
  observe(sink: EventSink): void {
    this.events = sink
  }

  /** Every row of every table (tests check what is at rest; never on a request path). */
  async dump(): Promise<{ [T in TableName]?: Tables[T][] }> {
    const dump: Record<string, unknown[]> = {}
    for (const table of Object.keys(INDEXES) as TableName[]) dump[table] = await this.all(table)
    return dump
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.onClose()
  }
}
