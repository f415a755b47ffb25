import type { Expression, RawBuilder, SqlBool } from 'kysely'

/** What a database error means for the request that hit it. */
export type ErrorKind =
  /** A conflict with a concurrent transaction: rerun the transaction. */
  | 'retry'
  /** A unique constraint refused a write: rerun (a replay finds the row then), in the end 409. */
  | 'unique'
  /** The database cannot take requests right now: 503 `STORAGE_UNAVAILABLE`. */
  | 'unavailable'
  /** Not the database's: the request's own error. */
  | 'other'

/** One charge to a shared rate-limit bucket (a GCRA cell, see `pipeline/rateLimitCounters.ts`). */
export interface BucketCharge {
  /** The bucket's key (`key:<apiKeyId>`, `org:<organizationId>`…). */
  key: string
  /** Milliseconds between two requests at the sustained rate. */
  intervalMs: number
  /** How far ahead of now the bucket's `tat` may be for the charge to be let in. */
  toleranceMs: number
}

/** A bucket once charged: its theoretical arrival time and whether the charge was let in. */
export interface BucketState {
  key: string
  tat: number
  allowed: boolean
}

/**
 * Statements taking a whole list of values in one parameter (an array), which `readsAhead` and
 * `writesAtOnce` rely on. Each is given the parameters as expressions and writes this database's
 * own syntax around them; the store compiles the result once per shape (`Queries`).
 */
export interface ArrayStatements {
  /** True where `column` equals one of the values of the array parameter `values`. */
  anyOf(column: Expression<unknown>, values: Expression<unknown>): Expression<SqlBool>
  /**
   * One statement inserting, into each table of `inserts`, one row per position of its `arrays`:
   * one text-array parameter per column of `columns` (in that order, all of one length). All or
   * nothing: a row whose id (or any unique field) exists fails the whole statement; with
   * `replace`, a row whose id exists is replaced instead (another unique field still fails it).
   * The first column is the id, and an id appears at most once per table.
   *
   * With `owners`, each insert's `owners` array names, for each of its rows, the id of the row of
   * `owners.table` it belongs to (null: none), and `owners.ids` lists those ids: a row goes in
   * only if its owner exists as the statement runs. The statement rewrites each owner unchanged
   * (a new version of it, under its row lock), so a transaction that deletes or rewrites an owner
   * either did so first (its rows do not go in) or, having begun before this committed, conflicts
   * on it and reruns. It returns the owners that exist (one row each, column `id`).
   */
  insertFromArrays(
    inserts: {
      table: string
      columns: string[]
      arrays: Expression<unknown>[]
      owners?: Expression<unknown>
    }[],
    options?: { replace?: boolean; owners?: { table: string; ids: Expression<unknown> } },
  ): RawBuilder<unknown>
}

/**
 * What the store needs to know about the database under it, the way Kysely's `Dialect` tells its
 * query builder about one: the store's queries, read cache, group commit and retries are written
 * once against this, and each database is one object implementing it (`sqliteBackend.ts`,
 * `postgresBackend.ts`). An opener (`openDataDir`, `openPostgres`, `openMemoryStore`) makes the
 * Kysely instance and hands it to `Store.open` with its backend. Every statement whose SQL differs
 * between databases is built here (`arrays`, the rate-limit buckets, `compact`): nothing outside
 * `backends/` writes a database's own SQL or asks which database it is on.
 */
export interface StoreBackend {
  /** Names the database in messages. */
  readonly name: string
  /**
   * The column type of ids and looked-up fields in the migrations: text compared byte-wise, so ids
   * sort in creation order on every backend. Shipped migrations use it, so it never changes.
   */
  readonly textType: Expression<unknown>
  /** What `error`, thrown by this database or its driver, means for the request. */
  classify(error: unknown): ErrorKind
  /** The statement that begins a transaction, with its isolation (serializable). */
  readonly begin: string
  /**
   * The statement that begins a transaction on one snapshot without serializable's predicate
   * locks (PostgreSQL's REPEATABLE READ, which is snapshot isolation): `Store.transaction`'s
   * `isolation: 'snapshot'`, for a transaction whose writes beyond new rows are ordered by its
   * `locks`. It cannot fail another transaction's commit, nor be failed by one that wrote none of
   * its rows; two that update one row still conflict (the second is rerun, never a lost update).
   * Absent where `begin` already runs one transaction at a time (SQLite): `begin` is used.
   */
  readonly beginSnapshot?: string
  /**
   * Statements taking and giving back, for the connection and outside any transaction, the locks
   * named by the text array `$1`, in its order, that every process of the database sees
   * (PostgreSQL's session advisory locks): `Store.transaction`'s `locks`; and `inTransaction`,
   * taking the lock named by the text `$1` until the transaction ends (`Transaction.lock`), in
   * the same space. Absent where one connection runs every transaction.
   */
  readonly sessionLocks?: { lock: string; unlock: string; inTransaction: string }
  /** Most runs of a transaction that keeps conflicting (or keeps hitting a unique index) before it fails. */
  readonly maxAttempts: number
  /**
   * One connection runs every transaction in turn, so the transactions that queued for it run as
   * one database transaction with one commit (one fsync): see `GroupCommit`.
   */
  readonly groupsCommits: boolean
  /**
   * This process is the database's only writer, so committed reads can be kept until this process
   * commits a write to their table (`ReadCache`).
   */
  readonly cachesReads: boolean
  /**
   * `Store.prefetch` reads a request's first lookups ahead in one statement: worth it where each
   * read is a round trip. The statement takes array parameters (`arrays.anyOf`).
   */
  readonly readsAhead: boolean
  /**
   * A transaction's first run reads the fingerprint index to answer a replay with its activity.
   * Where transactions are SERIALIZABLE, that read would conflict with every concurrent activity
   * inserted into the index; such a backend relies on the unique index instead: a replay fails
   * its insert, and the rerun looks.
   */
  readonly checksReplayFirst: boolean
  /**
   * A transaction given a snapshot (`Store.transaction`'s `snapshot`: an activity that only adds
   * its own record) first runs without a database transaction, reading from the snapshot and
   * sending its inserts as one statement: worth it where each statement is a round trip and begin
   * and commit are two more. The statement takes array parameters (`arrays.insertFromArrays`).
   */
  readonly writesAtOnce: boolean
  /** The array statements; required where `readsAhead` or `writesAtOnce` (`Store.open` checks). */
  readonly arrays?: ArrayStatements
  /**
   * Concurrent requests' reads ahead and snapshot runs' inserts are merged into shared statements
   * (`Coalescer`): worth it where each statement costs the database and the driver far more than
   * the rows it carries.
   */
  readonly batchesRequests: boolean
  /**
   * True when beginning failed because the connection is still inside a transaction (one whose
   * rollback failed, on an I/O error): `GroupCommit` rolls it back and begins again.
   */
  stillInTransaction(error: unknown): boolean
  /**
   * Charges each bucket of `charges` (given in key order, so that two statements charging the same
   * buckets lock them in the same order) in one statement that decides and charges atomically
   * in autocommit, against the table `rateLimitBuckets`: a charge is let in while the bucket's
   * `tat` is at most `toleranceMs` ahead of `now`, and then moves `tat` one `intervalMs` on (from
   * `now` when it is past); a refused charge leaves `tat` as it was. Returns each bucket's row
   * after its charge (`allowed`: the charge was let in).
   */
  chargeBuckets(charges: readonly BucketCharge[], now: number): RawBuilder<BucketState>
  /** Deletes the buckets whose `tat` is before `idleBefore` (idle: a new bucket starts the same). */
  sweepBuckets(idleBefore: number): RawBuilder<unknown>
  /**
   * The statements, run in order outside any transaction, that rewrite the database's files so
   * that overwritten and deleted data (old ciphertexts after a key rotation) leave them; none
   * where the database's own maintenance does it (PostgreSQL: the operator's `VACUUM` after a
   * rotation, docs/operations.md).
   */
  readonly compact: readonly string[]
  /**
   * The statement that writes a consistent copy of the whole database, as of one instant, to the
   * new file `file` (`backupDatabase`); none where the database is copied by its own tools
   * (PostgreSQL: `pg_dump`).
   */
  readonly copyInto: ((file: string) => RawBuilder<unknown>) | undefined
}
