import { Kysely } from 'kysely'
import initSqlJs from 'sql.js'
import { type Database, Store } from './Store.ts'
import { syncSqliteDialect } from './sqlite.ts'

export interface MemoryStoreOptions {
  /**
   * Where the browser fetches sql.js's `sql-wasm.wasm` (with Vite: `import url from
   * 'sql.js/dist/sql-wasm.wasm?url'`). Node finds it on its own.
   */
  sqlWasmUrl?: string
}

let engines = new Map<string, ReturnType<typeof initSqlJs>>()

/**
 * An in-memory SQLite database (sql.js, WASM) with the service's schema: the default without a
 * data dir or database URL, in Node and in a browser (Storybook runs the service in the page).
 * Same dialect, migrations and queries as the file and PostgreSQL stores.
 */
export async function openMemoryStore(options: MemoryStoreOptions = {}): Promise<Store> {
  const key = options.sqlWasmUrl ?? ''
  let engine = engines.get(key)
  if (!engine) {
    engine = initSqlJs(options.sqlWasmUrl ? { locateFile: () => options.sqlWasmUrl! } : undefined)
    engines.set(key, engine)
    engine.catch(() => {
      engines = new Map([...engines].filter(([k]) => k !== key))
    })
  }
  const database = new (await engine).Database()
  const dialect = syncSqliteDialect({
    prepare(sql) {
      const statement = database.prepare(sql)
      return {
        all(parameters) {
          statement.bind(parameters as never)
          const rows: Record<string, unknown>[] = []
          while (statement.step()) rows.push(statement.getAsObject())
          statement.reset()
          return rows
        },
        run(parameters) {
          statement.run(parameters as never)
          return { changes: database.getRowsModified(), lastInsertRowid: 0 }
        },
        finalize: () => statement.free(),
      }
    },
    close: () => database.close(),
  })
  return Store.open(new Kysely<Database>({ dialect }), 'sqlite')
}
