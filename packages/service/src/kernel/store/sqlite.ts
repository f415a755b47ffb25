import { type SqliteDatabase, SqliteDialect, type SqliteStatement } from 'kysely'

/** The part of a synchronous SQLite binding (node-sqlite3-wasm, sql.js) Kysely's dialect needs. */
export interface SyncStatement {
  all(parameters: readonly unknown[]): Record<string, unknown>[]
  run(parameters: readonly unknown[]): { changes: number; lastInsertRowid: number | bigint }
  /** Frees the statement (after an error it cannot be reused: SQLite's reset reports the error again). */
  finalize?(): void
}

export interface SyncSqlite {
  prepare(sql: string): SyncStatement
  close(): void
}

const READER = /^\s*(select|with|pragma|values|explain)\b|\breturning\b/i
const CACHE = 256

/**
 * Kysely's SQLite dialect over a synchronous WASM SQLite: statements are prepared once and kept
 * (the service runs the same few dozen queries), and every call goes through Kysely's one
 * connection, so a transaction holds the database until it commits.
 */
export function syncSqliteDialect(database: SyncSqlite): SqliteDialect {
  const statements = new Map<string, SyncStatement>()
  const prepare = (sql: string): SyncStatement => {
    let statement = statements.get(sql)
    if (!statement) {
      statement = database.prepare(sql)
      if (statements.size >= CACHE) statements.delete(statements.keys().next().value!)
      statements.set(sql, statement)
    }
    return statement
  }
  const adapter: SqliteDatabase = {
    close: () => database.close(),
    prepare(sql): SqliteStatement {
      const statement = prepare(sql)
      // A statement whose step failed (disk full, I/O error) is dropped, and the next use prepares
      // a fresh one.
      const guarded = <R>(run: () => R): R => {
        try {
          return run()
        } catch (error) {
          if (statements.get(sql) === statement) statements.delete(sql)
          try {
            statement.finalize?.()
          } catch {}
          throw error
        }
      }
      return {
        reader: READER.test(sql),
        all: (parameters) => guarded(() => statement.all(parameters)),
        run: (parameters) => guarded(() => statement.run(parameters)),
        iterate: (parameters) => guarded(() => statement.all(parameters))[Symbol.iterator](),
      }
    },
  }
  return new SqliteDialect({ database: adapter })
}
