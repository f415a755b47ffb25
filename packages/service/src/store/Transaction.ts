import type { DatabaseConnection } from 'kysely'
import type { StoreBackend } from './backends/StoreBackend.ts'
import type { TableName, Tables } from './model.ts'
import type { Execute, Queries } from './Queries.ts'
import type { ReadCache } from './ReadCache.ts'
import type { Reads } from './Reads.ts'

/** What a transaction runs on, given by the store. */
export interface TransactionOptions {
  /** The connection the database transaction is open on. */
  connection: DatabaseConnection
  backend: StoreBackend
  queries: Queries
  /** 1 on the first run of the transaction's function, then 2, 3 … on reruns after conflicts. */
  attempt: number
  /**
   * The tables written so far by this transaction and those before it in its group (the read
   * cache forgets them at commit; until then they are read from the database).
   */
  written: Set<TableName>
  /** The store's read cache, for tables nobody in the group wrote (`StoreBackend.cachesReads`). */
  cache?: ReadCache
}

let savepoints = 0

/** One database transaction: reads see its own writes; `put` and `delete` apply at once, inside it. */
export class Transaction implements Reads {
  private readonly execute: Execute
  /** The tables this transaction itself wrote. */
  private readonly own = new Set<TableName>()

  /** The database under it: what it caches, whether a first run checks for a replay. */
  readonly backend: StoreBackend
  /** 1 on the first run of the transaction's function, then 2, 3 … on reruns after conflicts. */
  readonly attempt: number
  private readonly queries: Queries
  private readonly written: Set<TableName>
  private readonly cache: ReadCache | undefined

  constructor(options: TransactionOptions) {
    const { connection } = options
    this.backend = options.backend
    this.attempt = options.attempt
    this.queries = options.queries
    this.written = options.written
    this.cache = options.cache
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
