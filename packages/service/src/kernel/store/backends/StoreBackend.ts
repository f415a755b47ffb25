import type { Expression } from 'kysely'

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

/**
 * What the store needs to know about the database under it, the way Kysely's `Dialect` tells its
 * query builder about one: the store's queries, read cache, group commit and retries are written
 * once against this, and each database is one object implementing it (`sqliteBackend.ts`,
 * `postgresBackend.ts`). An opener (`openDataDir`, `openPostgres`, `openMemoryStore`) makes the
 * Kysely instance and hands it to `Store.open` with its backend.
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
  /** The statement that begins a transaction, with its isolation. */
  readonly begin: string
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
   * read is a round trip. The statement takes array parameters (`= any($1)`).
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
   * and commit are two more. The statement takes array parameters (`unnest`).
   */
  readonly writesAtOnce: boolean
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
}
