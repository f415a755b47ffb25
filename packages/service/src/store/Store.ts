import {
  INDEXES,
  type Op,
  type Row,
  type Snapshot,
  TABLE_NAMES,
  type TableName,
  type Tables,
} from './model.ts'

/**
 * Where commits go to be durable. `append` must not return before the ops are safely stored:
 * the service acknowledges an activity only after it returns.
 */
export interface StorageBackend {
  /** The state as of the last acknowledged commit, or undefined for a fresh store. */
  load(): Snapshot | undefined
  append(ops: Op[]): void
  /** Called after each commit is visible; a journaling backend may fold `snapshot()` into a new base. */
  afterCommit?(snapshot: () => Snapshot): void
  close?(): void
}

type Index = Map<string, Map<unknown, Set<string>>>

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}

/** Read access shared by the store (committed state) and a transaction (committed + draft). */
export interface Reads {
  get<T extends TableName>(table: T, id: string): Tables[T] | undefined
  /** Rows whose indexed `field` equals `value`, in id (creation) order. */
  findBy<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown): Tables[T][]
  /** Every row of a table, in id (creation) order. */
  all<T extends TableName>(table: T): Tables[T][]
}

/**
 * In-memory tables with lookup indexes, written only through transactions. A transaction keeps
 * its writes in a draft; `commit` makes them durable through the backend and then visible, so an
 * activity that throws half-way changes nothing. Transactions run one at a time.
 */
export class Store implements Reads {
  private readonly tables = new Map<TableName, Map<string, Row>>()
  private readonly indexes = new Map<TableName, Index>()
  private readonly backend: StorageBackend | undefined
  private queue: Promise<unknown> = Promise.resolve()

  constructor(backend?: StorageBackend) {
    this.backend = backend
    for (const table of TABLE_NAMES) {
      this.tables.set(table, new Map())
      this.indexes.set(table, new Map((INDEXES[table] as string[]).map((field) => [field, new Map()])))
    }
    const snapshot = backend?.load()
    if (snapshot)
      for (const table of TABLE_NAMES)
        for (const [id, row] of Object.entries(snapshot[table] ?? {})) this.apply(table, id, row as Row)
  }

  get<T extends TableName>(table: T, id: string): Tables[T] | undefined {
    return this.tables.get(table)!.get(id) as Tables[T] | undefined
  }

  findBy<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown): Tables[T][] {
    const index = this.indexes.get(table)!.get(field)
    if (!index) throw new Error(`${table}.${field} has no index (add it to INDEXES)`)
    const ids = [...(index.get(value) ?? [])].sort()
    return ids.map((id) => this.get(table, id)!)
  }

  all<T extends TableName>(table: T): Tables[T][] {
    const rows = this.tables.get(table)!
    return [...rows.keys()].sort().map((id) => rows.get(id) as Tables[T])
  }

  /** Every table as plain objects (what a file backend writes as a snapshot). */
  snapshot(): Snapshot {
    const snapshot: Record<string, Record<string, Row>> = {}
    for (const table of TABLE_NAMES) snapshot[table] = Object.fromEntries(this.tables.get(table)!)
    return snapshot as Snapshot
  }

  /** Ids of an indexed field's current values (used by a transaction to merge its draft). */
  indexedIds(table: TableName, field: string, value: unknown): Set<string> {
    return this.indexes.get(table)!.get(field)?.get(value) ?? new Set()
  }

  hasIndex(table: TableName, field: string): boolean {
    return this.indexes.get(table)!.has(field)
  }

  /**
   * Runs `fn` with a fresh transaction, after every earlier transaction has finished, and
   * commits its draft only if it resolves.
   */
  transaction<R>(fn: (tx: Transaction) => R | Promise<R>): Promise<R> {
    const run = this.queue.then(async () => {
      const tx = new Transaction(this)
      const result = await fn(tx)
      tx.commit()
      return result
    })
    this.queue = run.catch(() => undefined)
    return run
  }

  /**
   * Runs a synchronous transaction right away. Only for start-up, before any request: it does
   * not wait for queued transactions.
   */
  transactionSync<R>(fn: (tx: Transaction) => R): R {
    const tx = new Transaction(this)
    const result = fn(tx)
    tx.commit()
    return result
  }

  /** Durable first, visible second. Called by `Transaction.commit`. */
  write(ops: Op[]): void {
    if (ops.length === 0) return
    this.backend?.append(ops)
    for (const [table, id, row] of ops) this.apply(table, id, row)
    this.backend?.afterCommit?.(() => this.snapshot())
  }

  close(): void {
    this.backend?.close?.()
  }

  private apply(table: TableName, id: string, row: Row | null): void {
    const rows = this.tables.get(table)!
    const index = this.indexes.get(table)!
    const previous = rows.get(id)
    if (previous)
      for (const [field, values] of index) {
        const value = (previous as unknown as Record<string, unknown>)[field]
        values.get(value)?.delete(id)
        if (values.get(value)?.size === 0) values.delete(value)
      }
    if (row === null) {
      rows.delete(id)
      return
    }
    rows.set(id, deepFreeze(row))
    for (const [field, values] of index) {
      const value = (row as unknown as Record<string, unknown>)[field]
      if (value === undefined) continue
      const ids = values.get(value) ?? new Set<string>()
      values.set(value, ids)
      ids.add(id)
    }
  }
}

/** A draft over the store: reads see committed rows plus this draft's writes. */
export class Transaction implements Reads {
  private readonly draft = new Map<TableName, Map<string, Row | null>>()
  private done = false

  constructor(readonly store: Store) {}

  get<T extends TableName>(table: T, id: string): Tables[T] | undefined {
    const drafted = this.draft.get(table)?.get(id)
    if (drafted !== undefined) return (drafted ?? undefined) as Tables[T] | undefined
    return this.store.get(table, id)
  }

  findBy<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown): Tables[T][] {
    if (!this.store.hasIndex(table, field))
      throw new Error(`${table}.${field} has no index (add it to INDEXES)`)
    const ids = new Set(this.store.indexedIds(table, field, value))
    for (const id of this.draft.get(table)?.keys() ?? []) ids.add(id)
    return [...ids]
      .sort()
      .map((id) => this.get(table, id))
      .filter(
        (row): row is Tables[T] =>
          row !== undefined && (row as unknown as Record<string, unknown>)[field] === value,
      )
  }

  all<T extends TableName>(table: T): Tables[T][] {
    const ids = new Set(this.store.all(table).map((row) => row.id))
    for (const id of this.draft.get(table)?.keys() ?? []) ids.add(id)
    return [...ids]
      .sort()
      .map((id) => this.get(table, id))
      .filter((row): row is Tables[T] => row !== undefined)
  }

  put<T extends TableName>(table: T, row: Tables[T]): Tables[T] {
    if (this.done) throw new Error('transaction already committed')
    const rows = this.draft.get(table) ?? new Map<string, Row | null>()
    this.draft.set(table, rows)
    rows.set(row.id, deepFreeze(structuredClone(row)))
    return rows.get(row.id) as Tables[T]
  }

  delete(table: TableName, id: string): void {
    if (this.done) throw new Error('transaction already committed')
    const rows = this.draft.get(table) ?? new Map<string, Row | null>()
    this.draft.set(table, rows)
    rows.set(id, null)
  }

  /** Marks the draft so `rollbackTo` can drop later writes (rows are frozen, so a shallow copy suffices). */
  savepoint(): Map<TableName, Map<string, Row | null>> {
    return new Map([...this.draft].map(([table, rows]) => [table, new Map(rows)]))
  }

  rollbackTo(savepoint: Map<TableName, Map<string, Row | null>>): void {
    this.draft.clear()
    for (const [table, rows] of savepoint) this.draft.set(table, new Map(rows))
  }

  /** The draft as ops, in write order per table. */
  ops(): Op[] {
    const ops: Op[] = []
    for (const [table, rows] of this.draft) for (const [id, row] of rows) ops.push([table, id, row])
    return ops
  }

  commit(): void {
    if (this.done) return
    this.done = true
    this.store.write(this.ops())
  }
}
