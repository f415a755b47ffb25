import { Kysely } from 'kysely'
import { sqliteBackend } from './backends/sqliteBackend.ts'
import type { Database } from './Database.ts'
import { Store } from './Store.ts'
import type { SyncSqlite } from './sqlite.ts'
import { syncSqliteDialect } from './sqlite.ts'

export interface MemoryStoreOptions {
  /**
   * In a browser: where sql.js's `sql-wasm.wasm` is served (with Vite: `import url from
   * 'sql.js/dist/sql-wasm.wasm?url'`); the page then needs the optional peer `sql.js`. Node uses
   * node-sqlite3-wasm and ignores this.
   */
  sqlWasmUrl?: string
}

const inNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string'

/**
 * An in-memory SQLite database with the service's schema: the default without a data dir or a
 * database URL, in Node (node-sqlite3-wasm, as for a data dir) and in a browser (sql.js; Storybook
 * runs the service in the page). Same dialect, migrations and queries as the durable stores.
 */
export async function openMemoryStore(options: MemoryStoreOptions = {}): Promise<Store> {
  const database = inNode ? await openNodeMemory() : await openBrowserMemory(options.sqlWasmUrl)
  // The schema of a new, empty database goes in as one transaction: Kysely runs SQLite's
  // migrations statement by statement, each its own commit (about a hundred, which sql.js writes
  // through Emscripten's JS file system). No one else sees this database; a failed start drops it.
  execute(database, 'begin')
  try {
    const store = await Store.open(
      new Kysely<Database>({ dialect: syncSqliteDialect(database) }),
      sqliteBackend,
    )
    execute(database, 'commit')
    return store
  } catch (error) {
    database.close()
    throw error
  }
}

function execute(database: SyncSqlite, sql: string): void {
  const statement = database.prepare(sql)
  try {
    statement.run([])
  } finally {
    statement.finalize?.()
  }
}

async function openNodeMemory(): Promise<SyncSqlite> {
  const { wasmSqlite } = await import('./wasmSqlite.ts')
  return wasmSqlite(':memory:')
}

let engine: Promise<{ Database: new () => SqlJsDatabase }> | undefined

interface SqlJsStatement {
  bind(values: unknown): void
  step(): boolean
  getAsObject(): Record<string, unknown>
  reset(): void
  run(values: unknown): void
  free(): void
}
interface SqlJsDatabase {
  prepare(sql: string): SqlJsStatement
  getRowsModified(): number
  close(): void
}

async function openBrowserMemory(sqlWasmUrl: string | undefined): Promise<SyncSqlite> {
  if (!sqlWasmUrl)
    throw new Error(
      "createService() in a browser needs memory.sqlWasmUrl: the URL of sql.js's sql-wasm.wasm (install the optional peer sql.js)",
    )
  engine ??= import('sql.js').then((module) => module.default({ locateFile: () => sqlWasmUrl }))
  const database = new (await engine).Database()
  // sql.js keeps even an in-memory database as a file in Emscripten's JS file system, where every
  // journal write is a JS call: a journal in memory keeps rollback (savepoints) and skips them.
  for (const pragma of ['journal_mode = MEMORY', 'synchronous = OFF', 'temp_store = MEMORY']) {
    const statement = database.prepare(`PRAGMA ${pragma}`)
    statement.step()
    statement.free()
  }
  return {
    prepare(sql) {
      const statement = database.prepare(sql)
      return {
        all(parameters) {
          statement.bind(parameters)
          const rows: Record<string, unknown>[] = []
          while (statement.step()) rows.push(statement.getAsObject())
          statement.reset()
          return rows
        },
        run(parameters) {
          statement.run(parameters)
          return { changes: database.getRowsModified(), lastInsertRowid: 0 }
        },
        finalize: () => statement.free(),
      }
    },
    close: () => database.close(),
  }
}
