import { type Kysely, sql } from 'kysely'
import { Migrator } from 'kysely/migration'
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

// Kysely's types cannot follow a table name chosen at run time: the generic helpers see every
// table as id + data + string columns, and the row types come from `Tables`.
type DocumentTable = { id: string; data: string } & Record<string, string | null>
type AnyDb = Kysely<Record<string, DocumentTable>>
const anyDb = (db: Kysely<Database>) => db as unknown as AnyDb

function indexed(table: TableName, field: string): void {
  if (!(INDEXES[table] as string[]).includes(field))
    throw new Error(`${table}.${field} has no index (add a column and a migration)`)
}

async function getRow<T extends TableName>(db: AnyDb, table: T, id: string): Promise<Tables[T] | undefined> {
  const row = await db
    .selectFrom(table as string)
    .select('data')
    .where('id', '=', id)
    .executeTakeFirst()
  return row ? (JSON.parse(row.data as string) as Tables[T]) : undefined
}

async function findRows<T extends TableName>(
  db: AnyDb,
  table: T,
  field: string,
  value: unknown,
): Promise<Tables[T][]> {
  indexed(table, field)
  if (value === undefined || value === null) return []
  const rows = await db
    .selectFrom(table as string)
    .select('data')
    .where(field, '=', String(value))
    .orderBy('id')
    .execute()
  return rows.map((row: { data: string }) => JSON.parse(row.data as string) as Tables[T])
}

async function allRows<T extends TableName>(db: AnyDb, table: T): Promise<Tables[T][]> {
  const rows = await db
    .selectFrom(table as string)
    .select('data')
    .orderBy('id')
    .execute()
  return rows.map((row: { data: string }) => JSON.parse(row.data as string) as Tables[T])
}

async function countRows(db: AnyDb, table: TableName, field: string, value: unknown): Promise<number> {
  indexed(table, field)
  const row = await db
    .selectFrom(table as string)
    .select((eb) => eb.fn.countAll().as('n'))
    .where(field, '=', String(value))
    .executeTakeFirstOrThrow()
  return Number(row.n)
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

const MAX_ATTEMPTS = 12

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

  private constructor(
    readonly db: Kysely<Database>,
    readonly dialect: Dialect,
    private readonly onClose: () => Promise<void> | void,
  ) {}

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

  get<T extends TableName>(table: T, id: string) {
    return this.guard(() => getRow(anyDb(this.db), table, id))
  }

  findBy<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown) {
    return this.guard(() => findRows(anyDb(this.db), table, field, value))
  }

  all<T extends TableName>(table: T) {
    return this.guard(() => allRows(anyDb(this.db), table))
  }

  count<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown) {
    return this.guard(() => countRows(anyDb(this.db), table, field, value))
  }

  /**
   * Runs `fn` in one transaction and commits if it resolves. On PostgreSQL it is SERIALIZABLE: a
   * conflict with a concurrent transaction (on this instance or another) reruns `fn` from the
   * start, up to a bound, so `fn` sees either all or none of every other transaction's writes.
   */
  async transaction<R>(fn: (tx: Transaction) => Promise<R> | R): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.guard(() =>
          this.db.connection().execute(async (connection) => {
            const begin = sql.raw(
              this.dialect === 'postgres' ? 'begin isolation level serializable' : 'begin immediate',
            )
            try {
              await begin.execute(connection)
            } catch (error) {
              // SQLite's one connection can be left inside a transaction whose rollback failed
              // (an I/O error): end it, then begin again.
              if (this.dialect !== 'sqlite' || !/within a transaction/.test(String(error))) throw error
              await sql.raw('rollback').execute(connection)
              await begin.execute(connection)
            }
            let result: R
            try {
              result = await fn(new Transaction(connection, this.dialect))
            } catch (error) {
              await sql
                .raw('rollback')
                .execute(connection)
                .catch(() => undefined)
              throw error
            }
            try {
              await sql.raw('commit').execute(connection)
            } catch (error) {
              await sql
                .raw('rollback')
                .execute(connection)
                .catch(() => undefined)
              throw error
            }
            return result
          }),
        )
      } catch (error) {
        const kind = classify(error)
        if ((kind === 'retry' || kind === 'unique') && attempt < MAX_ATTEMPTS) {
          // Back off a little, with jitter, so the transactions that collided do not collide again.
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 4 * attempt))
          continue
        }
        if (kind === 'retry') throw unavailable(error)
        if (kind === 'unique')
          throw new ApiError('ALREADY_EXISTS', 'a concurrent request created the same record')
        throw error
      }
    }
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
  constructor(
    private readonly db: Kysely<Database>,
    readonly dialect: Dialect,
  ) {}

  get<T extends TableName>(table: T, id: string) {
    return getRow(anyDb(this.db), table, id)
  }

  findBy<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown) {
    return findRows(anyDb(this.db), table, field, value)
  }

  all<T extends TableName>(table: T) {
    return allRows(anyDb(this.db), table)
  }

  count<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown) {
    return countRows(anyDb(this.db), table, field, value)
  }

  /** Inserts or replaces the row with `row.id`. */
  async put<T extends TableName>(table: T, row: Tables[T]): Promise<Tables[T]> {
    const columns: DocumentTable = { id: row.id, data: JSON.stringify(row) }
    for (const field of INDEXES[table] as string[]) {
      const value = (row as unknown as Record<string, unknown>)[field]
      columns[field] = value === undefined || value === null ? null : String(value)
    }
    const { id: _, ...update } = columns
    await anyDb(this.db)
      .insertInto(table as string)
      .values(columns)
      .onConflict((conflict) => conflict.column('id').doUpdateSet(update))
      .execute()
    return row
  }

  /** Inserts a row that must not exist yet; false (and nothing written) when its id is taken. */
  async insertNew<T extends TableName>(table: T, row: Tables[T]): Promise<boolean> {
    const columns: DocumentTable = { id: row.id, data: JSON.stringify(row) }
    for (const field of INDEXES[table] as string[]) {
      const value = (row as unknown as Record<string, unknown>)[field]
      columns[field] = value === undefined || value === null ? null : String(value)
    }
    const result = await anyDb(this.db)
      .insertInto(table as string)
      .values(columns)
      .onConflict((conflict) => conflict.column('id').doNothing())
      .executeTakeFirst()
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1
  }

  async delete(table: TableName, id: string): Promise<void> {
    await this.db.deleteFrom(table).where('id', '=', id).execute()
  }

  /** Marks a point `rollbackTo` can return to (a SQL savepoint). */
  async savepoint(): Promise<string> {
    const name = `sp${++savepoints}`
    await sql`savepoint ${sql.id(name)}`.execute(this.db)
    return name
  }

  async rollbackTo(savepoint: string): Promise<void> {
    await sql`rollback to savepoint ${sql.id(savepoint)}`.execute(this.db)
  }
}

export type { Row }
