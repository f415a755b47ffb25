import { CompiledQuery } from 'kysely'
import type { StoreBackend } from './backends/StoreBackend.ts'
import { INDEXES, type TableName, type Tables } from './model.ts'
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
  /**
   * Sends a snapshot run's rows at `flush` (the store's, merged with other requests' rows): false
   * when none went in, the organization they belong to being gone (`Store.transaction`'s `owner`).
   */
  insert?: (rows: RowValues[]) => Promise<boolean>
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
  /**
   * A group commit's shared read ahead (`SharedAhead`): `ahead` is what the group's first
   * statement read for every transaction of the group, and reads are answered from it with what
   * the group's transactions wrote since, which are sent together before its commit (`handOver`).
   */
  shared?: SharedAhead
}

/**
 * What the transactions of one group commit (PostgreSQL's transactions under the same locks,
 * `Store.transaction`'s `readAhead`) share: one statement read the lookups of all of them, after
 * the group's `begin`, and each reads from it, with the rows the transactions before it in the
 * group wrote (kept here, last write of each id) laid over it; their writes are sent as one
 * statement before the group commits. So a group of n costs lock, begin, read, write, commit and
 * unlock: six statements, not 4 + 2n.
 */
export class SharedAhead {
  /** The rows the group's transactions wrote so far, by table and id (the last write of each). */
  readonly rows = new Map<TableName, Map<string, RowValues>>()
  /** Of those, the writes not sent yet, in order. */
  readonly pending: RowValues[] = []
  /** Tables a transaction of the group deleted rows of: read from the database from then on. */
  readonly deleted = new Set<TableName>()

  constructor(
    /** What the group's first statement found, keyed as `lookupKey` keys a lookup. */
    readonly ahead: ReadonlyMap<string, string[]>,
    /** The ids of the rows of each array of `ahead`, in the same order (`Queries.lookupMany`'s `ids`). */
    readonly ids: ReadonlyMap<string[], string[]>,
  ) {}

  /**
   * The ids of the rows `found` (what `ahead` holds for a lookup), in order; undefined if the read
   * did not give them (the transaction then reads the database).
   */
  idsOf(found: string[]): readonly string[] | undefined {
    if (found.length === 0) return found
    const ids = this.ids.get(found)
    return ids?.length === found.length ? ids : undefined
  }

  /** Takes what one transaction wrote (in order) and the part of it not sent yet. */
  take(written: readonly RowValues[], unsent: readonly RowValues[], deleted: Iterable<TableName>): void {
    for (const row of written) {
      const rows = this.rows.get(row.table) ?? new Map<string, RowValues>()
      this.rows.set(row.table, rows)
      rows.set(row.values[0]!, row)
    }
    this.pending.push(...unsent)
    for (const table of deleted) this.deleted.add(table)
  }
}

/** Rows replacing their ids' in one statement; a row written twice goes once, as last written. */
export async function replaceRows(
  queries: Queries,
  execute: Execute,
  rows: readonly RowValues[],
): Promise<void> {
  if (rows.length === 0) return
  // Where each row's id was last written, by table: the rows that are the last write of their
  // id, in the order written (all of them, as they are, when no id is written twice).
  const last = new Map<TableName, Map<string, number>>()
  let twice = false
  rows.forEach((row, index) => {
    let ids = last.get(row.table)
    if (!ids) {
      ids = new Map()
      last.set(row.table, ids)
    }
    const id = row.values[0]!
    if (ids.has(id)) twice = true
    ids.set(id, index)
  })
  const kept = twice ? rows.filter((row, index) => last.get(row.table)!.get(row.values[0]!) === index) : rows
  await queries.insertMany(execute, kept, { replace: true })
}

/** What a read asks for: a row by id, or the rows whose indexed field has a value. */
type Wanted = { id: string } | { field: string; value: string }

/** True when a written row is one `wanted` finds, as the database compares its columns. */
function finds(row: RowValues, wanted: Wanted): boolean {
  if ('id' in wanted) return row.values[0] === wanted.id
  const column = (INDEXES[row.table] as string[]).indexOf(wanted.field)
  return column >= 0 && row.values[column + 2] === wanted.value
}

/** True when `ids` are in the order `sort` puts them, none twice. */
function ascending(ids: readonly string[]): boolean {
  for (let index = 1; index < ids.length; index++) if (!(ids[index - 1]! < ids[index]!)) return false
  return true
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
  private readonly insert: ((rows: RowValues[]) => Promise<boolean>) | undefined
  private readonly held: Set<string>
  private readonly ahead: ReadonlyMap<string, string[]> | undefined
  private readonly defers: boolean
  private readonly shared: SharedAhead | undefined
  /** A snapshot run's writes, in order, until `flush` (deferred writes: those not sent yet). */
  private readonly pending: RowValues[] = []
  /**
   * In a group that shares its read ahead (`shared`): every write of this transaction, in order,
   * sent or not (what its reads see over the read ahead), and how many of them came before each
   * SQL savepoint it took (a rollback to it forgets the rest).
   */
  private readonly log: RowValues[] = []
  private readonly logAt = new Map<string, number>()
  /** Tables this transaction deleted rows of (read from the database from then on). */
  private readonly deletedFrom = new Set<TableName>()
  /**
   * True once a snapshot run met something its snapshot cannot answer: what it did is dropped
   * even if the function caught the error (a handler turning any throw into a failed activity).
   */
  missed = false

  /**
   * A snapshot run (`Store.transaction`'s `snapshot`): it reads the rows it was given, as of their
   * prefetch. Otherwise a database transaction, which reads what is committed as it runs.
   */
  get onSnapshot(): boolean {
    return this.snapshot !== undefined
  }

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
    this.shared = this.defers ? options.shared : undefined
  }

  /**
   * Sends the writes a transaction that `defersWrites` kept, before a statement that could see
   * them: one statement each side of every lazy savepoint with writes after it (which becomes a
   * SQL savepoint there), usually one in all.
   */
  private async settle(): Promise<void> {
    if (!this.defers) return
    // What the group's transactions before this one wrote goes first, with this one's first rows.
    let before = this.shared?.pending.splice(0) ?? []
    if (this.pending.length === 0 && before.length === 0) return
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
      await this.replaceRows([...before, ...rows.slice(from, at)])
      before = []
      mark.name = `sp${++savepoints}`
      this.logAt.set(mark.name, mark.logAt ?? this.log.length)
      await this.queries.savepoint(this.execute, mark.name)
      from = at
    }
    await this.replaceRows([...before, ...rows.slice(from)])
  }

  private replaceRows(rows: RowValues[]): Promise<void> {
    return replaceRows(this.queries, this.execute, rows)
  }

  /**
   * In a group that shares its read ahead: what it read for `wanted` of `table`, with the rows the
   * group wrote since laid over it (replaced by id, dropped when they no longer match, added when
   * they now do, in id order as the database returns them), as JSON documents; undefined when it
   * was not read, or rows of the table were deleted since (read from the database).
   */
  private sharedAhead(table: TableName, key: string, wanted: Wanted): string[] | undefined {
    const shared = this.shared!
    if (shared.deleted.has(table) || this.deletedFrom.has(table)) return undefined
    const found = shared.ahead.get(key)
    if (!found) return undefined
    const earlier = shared.rows.get(table)
    let own = false
    for (const row of this.log)
      if (row.table === table) {
        own = true
        break
      }
    if (!earlier?.size && !own) return found
    const ids = shared.idsOf(found)
    if (!ids) return undefined
    // What was read, as it was, when no row written since is one of them or one it now finds
    // (the rows of other organizations a group wrote), and it is in the order built below.
    let touched = false
    const touches = (row: RowValues) => finds(row, wanted) || ids.includes(row.values[0]!)
    if (earlier)
      for (const row of earlier.values())
        if (touches(row)) {
          touched = true
          break
        }
    if (!touched && own)
      for (const row of this.log)
        if (row.table === table && touches(row)) {
          touched = true
          break
        }
    if (!touched && ascending(ids)) return found
    const byId = new Map<string, string>()
    ids.forEach((id, index) => {
      byId.set(id, found[index]!)
    })
    const apply = (row: RowValues) => {
      const id = row.values[0]!
      if (finds(row, wanted)) byId.set(id, row.values[1]!)
      else byId.delete(id)
    }
    if (earlier) for (const row of earlier.values()) apply(row)
    for (const row of this.log) if (row.table === table) apply(row)
    return [...byId.keys()].sort().map((id) => byId.get(id)!)
  }

  /**
   * What the transaction's first statement read for a lookup (`ahead`), or undefined: it was not
   * read, or the transaction wrote the table since (its own rows are read from the database). In
   * a group that shares its read ahead, with what the group wrote since (`sharedAhead`).
   */
  private readAhead(table: TableName, key: string, wanted: Wanted): string[] | undefined {
    if (this.shared) return this.sharedAhead(table, key, wanted)
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
   * or the writes a transaction that `defersWrites` kept (before its commit). A snapshot run whose
   * rows did not go in (`insert`: their organization is gone) is dropped, as one that `missed`.
   */
  async flush(): Promise<void> {
    if (this.shared) return this.handOver()
    if (this.defers) return this.settle()
    const rows = this.pending.splice(0)
    if (rows.length === 0) return
    if (!this.insert) await this.queries.insertMany(this.execute, rows)
    else if (!(await this.insert(rows))) this.missed = true
  }

  /**
   * In a group that shares its read ahead: hands this transaction's writes to the group, for the
   * transactions after it to read and for the group to send before its commit.
   */
  private handOver(): void {
    this.shared!.take(this.log, this.pending.splice(0), this.deletedFrom)
  }

  /** True when this transaction wrote `table` (rows of it may differ from what was committed). */
  wrote(table: TableName): boolean {
    return this.own.has(table)
  }

  async get<T extends TableName>(table: T, id: string): Promise<Tables[T] | undefined> {
    if (this.snapshot) return this.fromSnapshot(table, (snapshot) => snapshot.get(table, id))
    const ahead = this.readAhead(table, lookupKey({ table, id }), { id })
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
        : this.readAhead(table, lookupKey({ table, field, value: String(value) }), {
            field,
            value: String(value),
          })
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
    if (this.snapshot || this.defers) {
      const values = this.queries.rowValues(table, row)
      this.pending.push(values)
      if (this.shared) this.log.push(values)
    } else await this.queries.put(this.execute, table, row)
    return row
  }

  async delete(table: TableName, id: string): Promise<void> {
    if (this.snapshot) throw this.miss()
    await this.settle()
    await this.armed()
    this.written.add(table)
    this.own.add(table)
    this.deletedFrom.add(table)
    await this.queries.delete(this.execute, table, id)
  }

  /** Marks a point `rollbackTo` can return to (a SQL savepoint). */
  async savepoint(): Promise<string> {
    if (this.snapshot) throw this.miss()
    await this.settle()
    await this.armed()
    const name = `sp${++savepoints}`
    this.logAt.set(name, this.log.length)
    await this.queries.savepoint(this.execute, name)
    return name
  }

  /**
   * Lazy savepoints still open, outermost first (an activity run inside another's nests them);
   * where writes are deferred, `at` is how many kept writes came before it.
   */
  private readonly marks: { name?: string; at?: number; logAt?: number }[] = []

  /** Takes the lazy savepoints that wait for the first write after them, outermost first. */
  private async armed(): Promise<void> {
    for (const mark of this.marks) {
      if (mark.name !== undefined) continue
      mark.name = `sp${++savepoints}`
      this.logAt.set(mark.name, mark.logAt ?? this.log.length)
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
    const mark: { name?: string; at?: number; logAt?: number } = this.defers
      ? { at: this.pending.length, logAt: this.log.length }
      : {}
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
        else if (this.defers) {
          this.pending.length = Math.min(this.pending.length, mark.at ?? 0)
          this.log.length = Math.min(this.log.length, mark.logAt ?? 0)
        }
      },
      end,
    }
  }

  async rollbackTo(savepoint: string): Promise<void> {
    if (this.snapshot) throw this.miss()
    // Writes kept now came after the last statement sent, so after `savepoint`: undone unsent.
    if (this.defers) this.pending.length = 0
    const at = this.logAt.get(savepoint)
    if (at !== undefined) this.log.length = Math.min(this.log.length, at)
    await this.queries.savepoint(this.execute, savepoint, 'rollback')
  }
}
