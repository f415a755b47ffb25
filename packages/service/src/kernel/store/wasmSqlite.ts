// Node only: node-sqlite3-wasm (SQLite compiled to WASM, with a VFS over node:fs that fsyncs).
import nodeSqlite from 'node-sqlite3-wasm'
import type { SyncSqlite } from './sqlite.ts'

/** A file (or ':memory:') database as a `SyncSqlite`; its statements are finalized on close. */
export function wasmSqlite(
  file: string,
  options: { readOnly?: boolean } = {},
): SyncSqlite & { exec(sql: string): void } {
  const database = new nodeSqlite.Database(file, options.readOnly ? { readOnly: true } : undefined)
  const prepared = new Set<{ finalize(): void }>()
  return {
    exec: (sql) => database.exec(sql),
    prepare(sql) {
      const statement = database.prepare(sql)
      prepared.add(statement)
      return {
        all: (parameters) => statement.all(parameters as never) as Record<string, unknown>[],
        run: (parameters) =>
          statement.run(parameters as never) as { changes: number; lastInsertRowid: number },
        finalize: () => {
          if (prepared.delete(statement)) statement.finalize()
        },
      }
    },
    close() {
      for (const statement of prepared) statement.finalize()
      prepared.clear()
      database.close()
    },
  }
}
