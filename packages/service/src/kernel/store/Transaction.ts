import { CompiledQuery } from 'kysely'
import type { StoreBackend } from './backends/StoreBackend.ts'
import type { TableName, Tables } from './model.ts'
import { decodeRow, type Execute, type PageByOptions, type Queries, type RowValues } from './Queries.ts'
import type { ReadCache } from './ReadCache.ts'
import { lookupKey, type Reads } from './Reads.ts'

/**
 * Thrown by a read a snapshot run cannot answer from its snapshot (a row it was not given, a table
 * it wrote itself) and by a write it cannot keep for later (a delete, a savepoint): the store drops
 * the run and does the work again in a database transaction.
 */
export class NotInSnapshot extends Error {
  constructor() {
    super('not in the snapshot')
  }
}

/** What a transaction runs on, given by the store. */
export interface TransactionOptions {
  /**
   * Runs a statement: on the connection the database transaction is open on, or, for a snapshot
   * run, on any connection (only `flush` writes, in one statement).
   */
  execute: Execute
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
  /**
   * A snapshot run (`Store.transaction`'s `snapshot`): reads are answered from these rows, read
   * by one statement, and writes are kept until `flush` sends them as one statement of inserts.
   */
  snapshot?: Reads
  /** Sends a snapshot run's rows at `flush` (the store's, merged with other requests' rows). */
  insert?: (rows: RowValues[]) => Promise<void>
  /** The locks held for this transaction: `Store.transaction`'s `locks`, then what `lock` takes. */
  held?: Set<string>
  /**
   * What the transaction read first, in one statement (`Store.transaction`'s `readAhead`), keyed
   * as `Prefetched` keys it: reads of a table the transaction has not written are answered from it.
   */
  ahead?: ReadonlyMap<string, string[]>
  /**
   * Keeps writes (`put`) and sends them together, as one statement replacing rows by id, just
   * before the next statement that could see them and before the commit (`flush`); a lazy
   * savepoint nothing was sent after costs no statement. For a transaction that reads ahead
   * (`ahead`): its reads are answered without a statement, so its writes need not go one by one.
   */
  defersWrites?: boolean
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
  private readonly snapshot: Reads | undefined
  private readonly insert: ((rows: RowValues[]) => Promise<void>) | undefined
  private readonly held: Set<string>
  private readonly ahead: ReadonlyMap<string, string[]> | undefined
  private readonly defers: boolean
  /** A snapshot run's writes, in order, until `flush`. */
  private readonly pending: RowValues[] = []
  /**
   * True once a snapshot run met something its snapshot cannot answer: what it did is dropped
   * even if the function caught the error (a handler turning any throw into a failed activity).
   */
  missed = false

  constructor(options: TransactionOptions) {
    this.backend = options.backend
    this.attempt = options.attempt
    this.queries = options.queries
    this.written = options.written
    this.cache = options.cache
    this.snapshot = options.snapshot
    this.execute = options.execute
    this.insert = options.insert
    this.held = options.held ?? new Set()
    this.ahead = options.ahead
    this.defers = Boolean(options.defersWrites) && !options.snapshot
  }

  /**
   * Sends the writes a transaction that `defersWrites` kept, before a statement that could see
   * them: one statement each side of every lazy savepoint with writes after it (which becomes a
   * SQL savepoint there), usually one in all.
   */
  private async settle(): Promise<void> {
    if (!this.defers || this.pending.length === 0) return
    const rows = this.pending.splice(0)
    let from = 0
    for (const mark of this.marks) {
      if (mark.name !== undefined) continue
      const at = mark.at ?? 0
      if (at >= rows.length) {
        // Nothing written after it yet: it stays a mark, at the start of what is kept next.
        mark.at = 0
        continue
      }
      await this.replaceRows(rows.slice(from, at))
      mark.name = `sp${++savepoints}`
      await this.queries.savepoint(this.execute, mark.name)
      from = at
    }
    await this.replaceRows(rows.slice(from))
  }

  /** Rows replacing their ids' in one statement; a row written twice goes once, as last written. */
  private async replaceRows(rows: RowValues[]): Promise<void> {
    if (rows.length === 0) return
    const last = new Map<string, RowValues>()
    for (const row of rows) {
      const key = `${row.table}\u0000${row.values[0]}`
      last.delete(key)
      last.set(key, row)
    }
    await this.queries.insertMany(this.execute, [...last.values()], { replace: true })
  }

  /**
   * What the transaction's first statement read for a lookup (`ahead`), or undefined: it was not
   * read, or the transaction wrote the table since (its own rows are read from the database).
   */
  private readAhead(table: TableName, key: string): string[] | undefined {
    return this.ahead && !this.own.has(table) ? this.ahead.get(key) : undefined
  }

  /** True when the transaction holds the lock `name` (`Store.transaction`'s `locks`, or `lock`). */
  holds(name: string): boolean {
    return this.held.has(name)
  }

  /**
   * Takes the lock `name` (as `Store.transaction`'s `locks` name them) until the transaction ends,
   * where the database has such locks (PostgreSQL's advisory locks; elsewhere one connection runs
   * every transaction, nothing to take). Taken late, it orders the writes that follow it but not
   * the transaction's snapshot, which its first statement took: a writer of a row that another
   * holder rewrote meanwhile conflicts and is rerun. A writer that must read the last holder's
   * writes names the lock in `locks`, before it begins. A snapshot run cannot hold a lock: it is
   * run again as a transaction.
   */
  async lock(name: string): Promise<void> {
    if (this.held.has(name)) return
    const statement = this.backend.sessionLocks?.inTransaction
    if (!statement) return
    if (this.snapshot) throw this.miss()
    await this.settle()
    await this.execute(CompiledQuery.raw(statement, [name]))
    this.held.add(name)
  }

  /** Marks a snapshot run as dropped and returns the error to throw. */
  private miss(): NotInSnapshot {
    this.missed = true
    return new NotInSnapshot()
  }

  /** A read of a snapshot run: never of a table it wrote (the snapshot holds no uncommitted rows). */
  private async fromSnapshot<R>(table: TableName, read: (snapshot: Reads) => Promise<R>): Promise<R> {
    if (this.own.has(table)) throw this.miss()
    try {
      return await read(this.snapshot!)
    } catch (error) {
      if (error instanceof NotInSnapshot) throw this.miss()
      throw error
    }
  }

  /**
   * Sends a snapshot run's writes, all in one statement (inserts only: a row that exists fails it),
   * or the writes a transaction that `defersWrites` kept (before its commit).
   */
  async flush(): Promise<void> {
    if (this.defers) return this.settle()
    const rows = this.pending.splice(0)
    if (rows.length === 0) return
    if (this.insert) await this.insert(rows)
    else await this.queries.insertMany(this.execute, rows)
  }

  /** True when this transaction wrote `table` (rows of it may differ from what was committed). */
  wrote(table: TableName): boolean {
    return this.own.has(table)
  }

  async get<T extends TableName>(table: T, id: string): Promise<Tables[T] | undefined> {
    if (this.snapshot) return this.fromSnapshot(table, (snapshot) => snapshot.get(table, id))
    const ahead = this.readAhead(table, lookupKey({ table, id }))
    if (ahead) return ahead[0] === undefined ? undefined : decodeRow(table, id, ahead[0])
    await this.settle()
    return this.queries.get(this.execute, table, id, this.cacheFor(table))
  }

  async findBy<T extends TableName>(
    table: T,
    field: keyof Tables[T] & string,
    value: unknown,
  ): Promise<Tables[T][]> {
    if (this.snapshot) return this.fromSnapshot(table, (snapshot) => snapshot.findBy(table, field, value))
    const ahead =
      value === undefined || value === null
        ? undefined
        : this.readAhead(table, lookupKey({ table, field, value: String(value) }))
    if (ahead)
      try {
        return ahead.map((text) => JSON.parse(text) as Tables[T])
      } catch {
        // A damaged document: the database's own read names its row.
      }
    await this.settle()
    return this.queries.findBy(this.execute, table, { field, value }, this.cacheFor(table))
  }

  /** The store's read cache, for a table nobody in this transaction's group has written yet. */
  private cacheFor(table: TableName): ReadCache | undefined {
    return this.cache && !this.written.has(table) ? this.cache : undefined
  }

  async all<T extends TableName>(table: T) {
    if (this.snapshot) throw this.miss()
    await this.settle()
    return this.queries.all(this.execute, table)
  }

  async count<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown) {
    if (this.snapshot) throw this.miss()
    await this.settle()
    return this.queries.count(this.execute, table, field, value)
  }

  /** A keyset page, as `Store.pageBy`, read in this transaction (a snapshot run reruns as one). */
  async pageBy<T extends TableName>(table: T, options: PageByOptions<T>): Promise<Tables[T][]> {
    if (this.snapshot) throw this.miss()
    await this.settle()
    return this.queries.pageBy(this.execute, table, options)
  }

  /** Inserts or replaces the row with `row.id` (a snapshot run only inserts, at `flush`). */
  async put<T extends TableName>(table: T, row: Tables[T]): Promise<Tables[T]> {
    if (!this.defers) await this.armed()
    this.written.add(table)
    this.own.add(table)
    if (this.snapshot || this.defers) this.pending.push(this.queries.rowValues(table, row))
    else await this.queries.put(this.execute, table, row)
    return row
  }

  async delete(table: TableName, id: string): Promise<void> {
    if (this.snapshot) throw this.miss()
    await this.settle()
    await this.armed()
    this.written.add(table)
    this.own.add(table)
    await this.queries.delete(this.execute, table, id)
  }

  /** Marks a point `rollbackTo` can return to (a SQL savepoint). */
  async savepoint(): Promise<string> {
    if (this.snapshot) throw this.miss()
    await this.settle()
    await this.armed()
    const name = `sp${++savepoints}`
    await this.queries.savepoint(this.execute, name)
    return name
  }

  /**
   * Lazy savepoints still open, outermost first (an activity run inside another's nests them);
   * where writes are deferred, `at` is how many kept writes came before it.
   */
  private readonly marks: { name?: string; at?: number }[] = []

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
    if (this.snapshot) {
      // Writes not sent yet are undone by forgetting them.
      const at = this.pending.length
      return {
        rollback: async () => {
          this.pending.length = Math.min(this.pending.length, at)
        },
        end: () => {},
      }
    }
    const mark: { name?: string; at?: number } = this.defers ? { at: this.pending.length } : {}
    this.marks.push(mark)
    const end = () => {
      const index = this.marks.indexOf(mark)
      if (index >= 0) this.marks.splice(index, 1)
    }
    return {
      rollback: async () => {
        end()
        if (mark.name !== undefined) await this.rollbackTo(mark.name)
        // Writes kept since it are forgotten (a SQL savepoint it became was taken before them all).
        else if (this.defers) this.pending.length = Math.min(this.pending.length, mark.at ?? 0)
      },
      end,
    }
  }

  async rollbackTo(savepoint: string): Promise<void> {
    if (this.snapshot) throw this.miss()
    // Writes kept now came after the last statement sent, so after `savepoint`: undone unsent.
    if (this.defers) this.pending.length = 0
    await this.queries.savepoint(this.execute, savepoint, 'rollback')
  }
}
