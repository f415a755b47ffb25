import { CompiledQuery, type DatabaseConnection, type Kysely, Migrator, type QueryResult, sql } from 'kysely'
import { ApiError } from '../errors.ts'
import { migrations } from './migrations.ts'
import { INDEXES, type Row, type TableName, type Tables } from './model.ts'

/**
 * The database as Kysely sees it: every table has its id, the row as a JSON document, and one
 * column per looked-up field (see `migrations.ts`). The document's type is `Tables[T]`.
 */
export type Database = {
  [T in TableName]: { id: string; data: string } & {
    [F in (typeof INDEXES)[T][number]]: string | null
  }
}

export type Dialect = 'sqlite' | 'postgres'

/** Read access shared by the store (committed state) and a transaction (its own view). */
export interface Reads {
  get<T extends TableName>(table: T, id: string): Promise<Tables[T] | undefined>
  /** Rows whose indexed `field` equals `value`, in id (creation) order. */
  findBy<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown): Promise<Tables[T][]>
  /** Every row of a table, in id (creation) order. */
  all<T extends TableName>(table: T): Promise<Tables[T][]>
  /** How many rows have `field` equal to `value`. */
  count<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown): Promise<number>
}

/**
 * One read of a batch (`Store.prefetch`): a row by id, the rows whose indexed field has a value,
 * or the rows whose ids are a column of the rows another indexed field finds (`via`: the users of
 * the API keys with a public key, say).
 */
export type Lookup =
  | { table: TableName; id: string }
  | { table: TableName; field: string; value: string }
  | { table: TableName; via: { table: TableName; field: string; value: string; column: string } }

/** Where `Prefetched` keeps what a lookup by id or by field found. */
const lookupKey = (lookup: Exclude<Lookup, { via: unknown }>) =>
  'id' in lookup
    ? `${lookup.table}\u0000id\u0000${lookup.id}`
    : `${lookup.table}\u0000${lookup.field}\u0000${lookup.value}`

/**
 * Reads answered from what `Store.prefetch` read at once; a read it was not asked for goes to the
 * store. Each read parses its own copy of a document.
 */
export class Prefetched implements Reads {
  constructor(
    private readonly store: Reads,
    private readonly found: ReadonlyMap<string, string[]>,
  ) {}

  async get<T extends TableName>(table: T, id: string): Promise<Tables[T] | undefined> {
    const data = this.found.get(lookupKey({ table, id }))
    if (!data) return this.store.get(table, id)
    return data[0] === undefined ? undefined : (JSON.parse(data[0]) as Tables[T])
  }

  async findBy<T extends TableName>(
    table: T,
    field: keyof Tables[T] & string,
    value: unknown,
  ): Promise<Tables[T][]> {
    const data =
      value === undefined || value === null
        ? undefined
        : this.found.get(lookupKey({ table, field, value: String(value) }))
    if (!data) return this.store.findBy(table, field, value)
    return data.map((text) => JSON.parse(text) as Tables[T])
  }

  all<T extends TableName>(table: T): Promise<Tables[T][]> {
    return this.store.all(table)
  }

  count<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown): Promise<number> {
    return this.store.count(table, field, value)
  }
}

// Kysely's types cannot follow a table name chosen at run time: the generic helpers see every
// table as id + data + string columns, and the row types come from `Tables`.
type DocumentTable = { id: string; data: string } & Record<string, string | null>
type AnyDb = Kysely<Record<string, DocumentTable>>
const anyDb = (db: Kysely<Database>) => db as unknown as AnyDb

function indexed(table: TableName, field: string): void {
  if (!(INDEXES[table] as string[]).includes(field))
    throw new Error(`${table}.${field} has no index (add a column and a migration)`)
}

/**
 * The service's few query shapes, each built and compiled by Kysely once per dialect and table
 * (compiling is a fifth of a request's CPU otherwise), then run with fresh parameters. The shape
 * is compiled with marker values, so each parameter's position is known.
 */
/** The store's read cache of committed documents (SQLite only): `load` runs on a miss. */
type ReadCache = <V>(table: TableName, key: string, load: () => Promise<V>) => Promise<V>

/** Runs one compiled query: through Kysely's pool, or on a transaction's own connection. */
type Execute = (query: CompiledQuery) => Promise<QueryResult<Record<string, unknown>>>

/** Stands in for a parameter while a shape is compiled (never sent to a database). */
const MARKER = '__latchkey_parameter_'

class Queries {
  private readonly cache = new Map<string, { sql: string; order: number[] }>()

  constructor(private readonly compiler: AnyDb) {}

  private shape(key: string, build: (marker: (i: number) => string) => { compile(): CompiledQuery }) {
    let shape = this.cache.get(key)
    if (!shape) {
      const compiled = build((i) => `${MARKER}${i}`).compile()
      const order = compiled.parameters.map((parameter) => {
        const match =
          typeof parameter === 'string' && parameter.startsWith(MARKER) ? /(\d+)$/.exec(parameter) : null
        if (!match) throw new Error(`query ${key} has a parameter that is not a marker`)
        return Number(match[1])
      })
      shape = { sql: compiled.sql, order }
      this.cache.set(key, shape)
    }
    return shape
  }

  private async run(db: Execute, key: string, build: Parameters<Queries['shape']>[1], values: unknown[]) {
    const { sql, order } = this.shape(key, build)
    return db(
      CompiledQuery.raw(
        sql,
        order.map((i) => values[i]),
      ),
    )
  }

  /** The row's JSON document, unparsed. */
  private async getData(db: Execute, table: TableName, id: string): Promise<string | undefined> {
    const { rows } = await this.run(
      db,
      `get:${table}`,
      (p) =>
        this.compiler
          .selectFrom(table as string)
          .select('data')
          .where('id', '=', p(0)),
      [id],
    )
    return rows[0] ? (rows[0].data as string) : undefined
  }

  /** A row by id, through `cache` when one is given (the SQLite read cache). */
  async get<T extends TableName>(
    db: Execute,
    table: T,
    id: string,
    cache?: ReadCache,
  ): Promise<Tables[T] | undefined> {
    const load = () => this.getData(db, table, id)
    const data = cache ? await cache(table, `get\u0000${id}`, load) : await load()
    return data === undefined ? undefined : (JSON.parse(data) as Tables[T])
  }

  /** The JSON documents of the rows whose `field` is `value`, in id order, unparsed. */
  private async findData(db: Execute, table: TableName, field: string, value: unknown): Promise<string[]> {
    const { rows } = await this.run(
      db,
      `find:${table}:${field}`,
      (p) =>
        this.compiler
          .selectFrom(table as string)
          .select('data')
          .where(field, '=', p(0))
          .orderBy('id'),
      [String(value)],
    )
    return rows.map((row) => row.data as string)
  }

  /** Rows whose indexed `field` equals `value`, through `cache` when one is given. */
  async findBy<T extends TableName>(
    db: Execute,
    table: T,
    field: string,
    value: unknown,
    cache?: ReadCache,
  ): Promise<Tables[T][]> {
    indexed(table, field)
    if (value === undefined || value === null) return []
    const load = () => this.findData(db, table, field, value)
    const found = cache ? await cache(table, `find\u0000${field}\u0000${String(value)}`, load) : await load()
    return found.map((data) => JSON.parse(data) as Tables[T])
  }

  /**
   * The lookups' JSON documents in one statement (`union all`, one round trip), keyed as
   * `Prefetched` reads them. Each lookup's rows are in id order; `Store.prefetch` checked the
   * fields are indexed.
   */
  async batch(db: Execute, lookups: Lookup[]): Promise<Map<string, string[]>> {
    const values: string[] = []
    const shapeKey = lookups
      .map((lookup) => {
        if ('id' in lookup) {
          values.push(lookup.id)
          return `${lookup.table}.id`
        }
        if ('field' in lookup) {
          values.push(lookup.value)
          return `${lookup.table}.${lookup.field}`
        }
        values.push(lookup.via.value)
        return `${lookup.table}<${lookup.via.table}.${lookup.via.column}.${lookup.via.field}`
      })
      .join(',')
    const { rows } = await this.run(
      db,
      `batch:${shapeKey}`,
      (p) => {
        const branch = (lookup: Lookup, n: number) => {
          const select = this.compiler
            .selectFrom(lookup.table as string)
            .select([sql.lit(n).as('n'), 'id', 'data'])
          if ('id' in lookup) return select.where('id', '=', p(n))
          if ('field' in lookup) return select.where(lookup.field, '=', p(n))
          const { via } = lookup
          return select.where('id', 'in', (eb) =>
            eb
              .selectFrom(via.table as string)
              .select(via.column)
              .where(via.field, '=', p(n)),
          )
        }
        let query = branch(lookups[0]!, 0)
        lookups.slice(1).forEach((lookup, k) => {
          query = query.unionAll(branch(lookup, k + 1))
        })
        return query.orderBy('n').orderBy('id')
      },
      values,
    )
    const found = new Map<string, string[]>()
    lookups.forEach((lookup) => {
      if (!('via' in lookup)) found.set(lookupKey(lookup), [])
    })
    for (const row of rows) {
      const lookup = lookups[Number(row.n)]!
      const data = row.data as string
      if ('via' in lookup) found.set(lookupKey({ table: lookup.table, id: row.id as string }), [data])
      else found.get(lookupKey(lookup))!.push(data)
    }
    return found
  }

  async all<T extends TableName>(db: Execute, table: T): Promise<Tables[T][]> {
    const { rows } = await this.run(
      db,
      `all:${table}`,
      () =>
        this.compiler
          .selectFrom(table as string)
          .select('data')
          .orderBy('id'),
      [],
    )
    return rows.map((row) => JSON.parse(row.data as string) as Tables[T])
  }

  async count(db: Execute, table: TableName, field: string, value: unknown): Promise<number> {
    indexed(table, field)
    const { rows } = await this.run(
      db,
      `count:${table}:${field}`,
      (p) =>
        this.compiler
          .selectFrom(table as string)
          .select((eb) => eb.fn.countAll().as('n'))
          .where(field, '=', p(0)),
      [String(value)],
    )
    return Number(rows[0]?.n ?? 0)
  }

  /** Inserts `row`, or replaces the row with its id. */
  async put(db: Execute, table: TableName, row: Row): Promise<void> {
    const fields = INDEXES[table] as string[]
    const values = [
      row.id,
      JSON.stringify(row),
      ...fields.map((field) => {
        const value = (row as unknown as Record<string, unknown>)[field]
        return value === undefined || value === null ? null : String(value)
      }),
    ]
    await this.run(
      db,
      `put:${table}`,
      (p) => {
        const columns: DocumentTable = { id: p(0), data: p(1) }
        fields.forEach((field, index) => {
          columns[field] = p(index + 2)
        })
        const { id: _, ...update } = columns
        return this.compiler
          .insertInto(table as string)
          .values(columns)
          .onConflict((conflict) => conflict.column('id').doUpdateSet(update))
      },
      values,
    )
  }

  /** `savepoint`, `rollback to savepoint` or `release savepoint` `name` (quoted by Kysely). */
  async savepoint(db: Execute, name: string, action: 'savepoint' | 'rollback' | 'release' = 'savepoint') {
    const statement =
      action === 'rollback'
        ? sql`rollback to savepoint ${sql.id(name)}`
        : action === 'release'
          ? sql`release savepoint ${sql.id(name)}`
          : sql`savepoint ${sql.id(name)}`
    await db(statement.compile(this.compiler))
  }

  async delete(db: Execute, table: TableName, id: string): Promise<void> {
    await this.run(
      db,
      `delete:${table}`,
      (p) => this.compiler.deleteFrom(table as string).where('id', '=', p(0)),
      [id],
    )
  }
}

/** What a PostgreSQL or SQLite error means for the request that hit it. */
export function classify(error: unknown): 'retry' | 'unique' | 'unavailable' | 'other' {
  const e = error as { code?: unknown; message?: unknown }
  const code = typeof e?.code === 'string' ? e.code : ''
  const message = typeof e?.message === 'string' ? e.message : ''
  // 25P02: an earlier statement of this transaction failed (a conflict caught somewhere): rerun it.
  if (code === '40001' || code === '40P01' || code === '25P02') return 'retry'
  if (code === '23505') return 'unique'
  if (
    /^(08|53|57P|58)/.test(code) ||
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'].includes(code) ||
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i.test(
      message,
    )
  )
    return 'unavailable'
  if (
    /database or disk is full|disk I\/O error|unable to open database|database is locked|attempt to write a readonly database|no transaction is active|cannot commit|SQLITE_FULL|SQLITE_IOERR/i.test(
      message,
    )
  )
    return 'unavailable'
  return 'other'
}

/** True for an error of the database itself (a conflict to retry, an outage), not of the request. */
export const isDatabaseError = (error: unknown): boolean =>
  !(error instanceof ApiError) && classify(error) !== 'other'

export const unavailable = (_cause: unknown) =>
  new ApiError(
    'STORAGE_UNAVAILABLE',
    'the database cannot take this request right now (nothing was changed); try again shortly',
    undefined,
    { retryAfterSeconds: 1 },
  )

/** Most SQLite transactions committed together (see `Store.grouped`). */
const GROUP_LIMIT = 64
/** Most lookups the SQLite read cache holds, and most characters of JSON, before it starts over. */
const READ_CACHE_LIMIT = 20_000
const READ_CACHE_CHARACTERS = 32 * 1024 * 1024
/** A lookup whose documents are longer than this (a big list) is not kept. */
const READ_CACHE_LARGEST = 256 * 1024

/** Characters of JSON in a cached lookup (one document, none, or a list of them). */
const sizeOf = (value: unknown): number =>
  typeof value === 'string'
    ? value.length
    : Array.isArray(value)
      ? value.reduce((sum: number, item) => sum + (typeof item === 'string' ? item.length : 0), 0)
      : 0

interface Grouped {
  fn: (tx: Transaction) => unknown
  attempt: number
  resolve(value: unknown): void
  reject(error: unknown): void
}

/** Reruns of a transaction that keeps colliding (many writers in one organization) before a 503. */
const MAX_ATTEMPTS = 30

/**
 * The service's data, in SQLite or PostgreSQL through Kysely. Reads outside a transaction see
 * committed rows; `transaction` runs a function in one database transaction (SERIALIZABLE on
 * PostgreSQL, retried on serialization failures, so it must not call out or have effects outside
 * the database), committing only if it resolves. When the database cannot take a request, the
 * caller gets `STORAGE_UNAVAILABLE` (HTTP 503) and nothing was acknowledged.
 *
 * On SQLite the one connection serialises transactions: never read through the store (rather than
 * the transaction) inside a transaction, and never open a transaction inside another.
 */
export class Store implements Reads {
  private closed = false

  private readonly queries: Queries
  /** Committed reads: each query takes a connection from Kysely and gives it back. */
  private readonly execute: Execute
  /**
   * SQLite only, where this process is the database's one writer (a data dir is locked to one
   * process): committed documents read outside transactions, by table and lookup, each tagged
   * with its table's version. A commit that wrote a table moves its version on before the
   * connection is free for the next read, so no read returns a document older than the last
   * commit. Documents are kept as JSON text and parsed on every read, so no caller shares one.
   */
  private readonly readCache = new Map<string, { version: number; value: unknown }>()
  private readCacheCharacters = 0
  private readonly tableVersions = new Map<TableName, number>()

  private readonly cacheRead: ReadCache = (table, key, load) => this.cached(table, key, load)

  private async cached<V>(table: TableName, key: string, load: () => Promise<V>): Promise<V> {
    if (this.dialect !== 'sqlite') return load()
    const version = this.tableVersions.get(table) ?? 0
    const cacheKey = `${table}\u0000${key}`
    const hit = this.readCache.get(cacheKey)
    if (hit && hit.version === version) return hit.value as V
    const value = await load()
    // A commit that ran while this read waited made its result stale: do not keep it.
    const size = sizeOf(value)
    if ((this.tableVersions.get(table) ?? 0) === version && size <= READ_CACHE_LARGEST) {
      if (
        this.readCache.size >= READ_CACHE_LIMIT ||
        this.readCacheCharacters + size > READ_CACHE_CHARACTERS
      ) {
        this.readCache.clear()
        this.readCacheCharacters = 0
      }
      const replaced = this.readCache.get(cacheKey)
      if (replaced) this.readCacheCharacters -= sizeOf(replaced.value)
      this.readCache.set(cacheKey, { version, value })
      this.readCacheCharacters += size
    }
    return value
  }

  private committed(tables: Iterable<TableName>): void {
    for (const table of tables) this.tableVersions.set(table, (this.tableVersions.get(table) ?? 0) + 1)
  }

  private constructor(
    readonly db: Kysely<Database>,
    readonly dialect: Dialect,
    private readonly onClose: () => Promise<void> | void,
  ) {
    this.queries = new Queries(anyDb(db))
    this.execute = (query) => db.executeQuery<Record<string, unknown>>(query)
  }

  /** Opens the store on a Kysely instance and brings its schema to the latest version. */
  static async open(
    db: Kysely<Database>,
    dialect: Dialect,
    onClose: () => Promise<void> | void = () => db.destroy(),
  ): Promise<Store> {
    const store = new Store(db, dialect, onClose)
    const migrator = new Migrator({ db, provider: migrations(dialect) })
    for (let attempt = 1; ; attempt++) {
      const { error } = await migrator.migrateToLatest()
      if (!error) break
      // Two instances creating the migration tables at once: the loser retries.
      if (attempt < 5 && ['retry', 'unique'].includes(classify(error))) continue
      if (classify(error) === 'unavailable') throw unavailable(error)
      throw error
    }
    return store
  }

  private async guard<R>(run: () => Promise<R>): Promise<R> {
    if (this.closed) throw unavailable(new Error('store closed'))
    try {
      return await run()
    } catch (error) {
      if (error instanceof ApiError) throw error
      if (classify(error) === 'unavailable') throw unavailable(error)
      throw error
    }
  }

  get<T extends TableName>(table: T, id: string): Promise<Tables[T] | undefined> {
    return this.guard(() => this.queries.get(this.execute, table, id, this.cacheRead))
  }

  findBy<T extends TableName>(
    table: T,
    field: keyof Tables[T] & string,
    value: unknown,
  ): Promise<Tables[T][]> {
    return this.guard(() => this.queries.findBy(this.execute, table, field, value, this.cacheRead))
  }

  all<T extends TableName>(table: T) {
    return this.guard(() => this.queries.all(this.execute, table))
  }

  count<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown) {
    return this.guard(() => this.queries.count(this.execute, table, field, value))
  }

  /**
   * Reads `lookups` now, as committed, and answers later reads of them from what was read: a
   * request's first reads (its credential, caller and organization), which its code makes one
   * after the other, cost one round trip on PostgreSQL instead of one each. SQLite has no round
   * trips to save: its reads go through the read cache as they are made, which measured faster
   * than reading ahead (2,915/s against 2,650/s signing through HTTP), so they are as of then.
   */
  async prefetch(lookups: Lookup[]): Promise<Prefetched> {
    for (const lookup of lookups)
      if ('field' in lookup) indexed(lookup.table, lookup.field)
      else if ('via' in lookup) {
        indexed(lookup.via.table, lookup.via.field)
        indexed(lookup.via.table, lookup.via.column)
      }
    if (this.dialect === 'sqlite' || lookups.length === 0) return new Prefetched(this, new Map())
    return this.guard(async () => new Prefetched(this, await this.queries.batch(this.execute, lookups)))
  }

  /**
   * Runs `fn` in one transaction and commits if it resolves. On PostgreSQL it is SERIALIZABLE: a
   * conflict with a concurrent transaction (on this instance or another) reruns `fn` from the
   * start, up to a bound, so `fn` sees either all or none of every other transaction's writes.
   */
  async transaction<R>(fn: (tx: Transaction) => Promise<R> | R): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      try {
        if (this.dialect === 'sqlite') return await this.grouped(fn, attempt)
        return await this.guard(() =>
          // One connection for the whole transaction, every statement sent straight to it.
          this.db.getExecutor().provideConnection(async (connection) => {
            const run = (statement: string) => connection.executeQuery(CompiledQuery.raw(statement, []))
            await run('begin isolation level serializable')
            let result: R
            try {
              result = await fn(new Transaction(connection, this.dialect, this.queries, attempt))
            } catch (error) {
              await run('rollback').catch(() => undefined)
              throw error
            }
            try {
              await run('commit')
            } catch (error) {
              await run('rollback').catch(() => undefined)
              throw error
            }
            return result
          }),
        )
      } catch (error) {
        const kind = classify(error)
        if ((kind === 'retry' || kind === 'unique') && attempt < MAX_ATTEMPTS) {
          // Back off with jitter, longer each time (up to 100 ms), so the transactions that
          // collided do not collide again.
          await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(100, 2 ** attempt)))
          continue
        }
        if (kind === 'retry') throw unavailable(error)
        if (kind === 'unique')
          throw new ApiError('ALREADY_EXISTS', 'a concurrent request created the same record')
        throw error
      }
    }
  }

  /** SQLite transactions waiting for the next group commit. */
  private readonly waiting: Grouped[] = []
  private committing = false

  /**
   * SQLite's group commit. Its one connection runs transactions one after the other anyway, so
   * the ones that queued up meanwhile run as one database transaction, one after the other, with
   * one commit, so one fsync, for all of them. When a function throws, the group is rolled back
   * and each of its functions runs again in a transaction of its own (a transaction's function
   * may always be rerun: see `transaction`), so a throw undoes exactly its own writes. Nobody
   * hears back before the commit that holds their writes: a result is acknowledged only once it
   * is durable, and when the database fails (a commit, or a statement on a full disk), no
   * function of the group is acknowledged and each gets the error.
   */
  private grouped<R>(fn: (tx: Transaction) => Promise<R> | R, attempt: number): Promise<R> {
    if (this.closed) return Promise.reject(unavailable(new Error('store closed')))
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({
        fn: fn as Grouped['fn'],
        attempt,
        resolve: resolve as Grouped['resolve'],
        reject,
      })
      if (!this.committing) void this.commitGroups()
    })
  }

  private async commitGroups(): Promise<void> {
    this.committing = true
    try {
      while (this.waiting.length > 0) await this.commitGroup(this.waiting.splice(0, GROUP_LIMIT))
    } finally {
      this.committing = false
    }
  }

  private async commitGroup(group: Grouped[]): Promise<void> {
    const outcomes: ({ value: unknown } | { error: unknown })[] = []
    try {
      await this.guard(() =>
        this.db.getExecutor().provideConnection(async (connection) => {
          const run = (statement: string) => connection.executeQuery(CompiledQuery.raw(statement, []))
          try {
            await run('begin immediate')
          } catch (error) {
            // The connection can be left inside a transaction whose rollback failed (an I/O
            // error): end it, then begin again.
            if (!/within a transaction/.test(String(error))) throw error
            await run('rollback')
            await run('begin immediate')
          }
          // The database failing (not a function) ends the whole group.
          const databaseFailed = (error: unknown) =>
            !(error instanceof ApiError) && classify(error) !== 'other'
          const runAll = async (items: Grouped[], reruns: boolean) => {
            const written = new Set<TableName>()
            try {
              for (const item of items) {
                const attempt = reruns ? item.attempt + 1 : item.attempt
                const tx = new Transaction(
                  connection,
                  'sqlite',
                  this.queries,
                  attempt,
                  written,
                  this.cacheRead,
                )
                outcomes.push({ value: await item.fn(tx) })
              }
              await run('commit')
            } catch (error) {
              await run('rollback').catch(() => undefined)
              throw error
            } finally {
              // Still holding the connection: no read can slip in between the commit and this.
              this.committed(written)
            }
          }
          try {
            await runAll(group, false)
          } catch (error) {
            if (databaseFailed(error)) throw error
            outcomes.length = 0
            if (group.length === 1) {
              outcomes.push({ error })
              return
            }
            // A function threw: everyone again, alone.
            for (const item of group) {
              await run('begin immediate')
              try {
                await runAll([item], true)
              } catch (alone) {
                if (databaseFailed(alone)) throw alone
                outcomes.push({ error: alone })
              }
            }
          }
        }),
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

let savepoints = 0

/** One database transaction: reads see its own writes; `put` and `delete` apply at once, inside it. */
export class Transaction implements Reads {
  private readonly execute: Execute
  /** The tables this transaction itself wrote. */
  private readonly own = new Set<TableName>()

  constructor(
    connection: DatabaseConnection,
    readonly dialect: Dialect,
    private readonly queries: Queries,
    /** 1 on the first run of the transaction's function, then 2, 3 … on reruns after conflicts. */
    readonly attempt = 1,
    /**
     * The tables written so far by this transaction and those before it in its SQLite group (the
     * store's read cache forgets them at commit; until then they are read from the database).
     */
    private readonly written = new Set<TableName>(),
    /** The store's read cache, for tables nobody in the group wrote (SQLite only). */
    private readonly cache?: ReadCache,
  ) {
    this.execute = (query) => connection.executeQuery<Record<string, unknown>>(query)
  }

  /** True when this transaction wrote `table` (rows of it may differ from what was committed). */
  wrote(table: TableName): boolean {
    return this.own.has(table)
  }

  get<T extends TableName>(table: T, id: string): Promise<Tables[T] | undefined> {
    return this.queries.get(this.execute, table, id, this.cacheFor(table))
  }

  findBy<T extends TableName>(
    table: T,
    field: keyof Tables[T] & string,
    value: unknown,
  ): Promise<Tables[T][]> {
    return this.queries.findBy(this.execute, table, field, value, this.cacheFor(table))
  }

  /** The store's read cache, for a table nobody in this transaction's group has written yet. */
  private cacheFor(table: TableName): ReadCache | undefined {
    return this.cache && !this.written.has(table) ? this.cache : undefined
  }

  all<T extends TableName>(table: T) {
    return this.queries.all(this.execute, table)
  }

  count<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown) {
    return this.queries.count(this.execute, table, field, value)
  }

  /** Inserts or replaces the row with `row.id`. */
  async put<T extends TableName>(table: T, row: Tables[T]): Promise<Tables[T]> {
    await this.armed()
    this.written.add(table)
    this.own.add(table)
    await this.queries.put(this.execute, table, row)
    return row
  }

  async delete(table: TableName, id: string): Promise<void> {
    await this.armed()
    this.written.add(table)
    this.own.add(table)
    await this.queries.delete(this.execute, table, id)
  }

  /** Marks a point `rollbackTo` can return to (a SQL savepoint). */
  async savepoint(): Promise<string> {
    await this.armed()
    const name = `sp${++savepoints}`
    await this.queries.savepoint(this.execute, name)
    return name
  }

  /** Lazy savepoints still open, outermost first (an activity run inside another's nests them). */
  private readonly marks: { name?: string }[] = []

  /** Takes the lazy savepoints that wait for the first write after them, outermost first. */
  private async armed(): Promise<void> {
    for (const mark of this.marks) {
      if (mark.name !== undefined) continue
      mark.name = `sp${++savepoints}`
      await this.queries.savepoint(this.execute, mark.name)
    }
  }

  /**
   * A savepoint that costs a statement only if something is written after it: `rollback` undoes
   * whatever was written since (nothing, if nothing was), and `end` stops watching for writes.
   */
  lazySavepoint(): { rollback(): Promise<void>; end(): void } {
    const mark: { name?: string } = {}
    this.marks.push(mark)
    const end = () => {
      const index = this.marks.indexOf(mark)
      if (index >= 0) this.marks.splice(index, 1)
    }
    return {
      rollback: async () => {
        end()
        if (mark.name !== undefined) await this.rollbackTo(mark.name)
      },
      end,
    }
  }

  async rollbackTo(savepoint: string): Promise<void> {
    await this.queries.savepoint(this.execute, savepoint, 'rollback')
  }
}
