import { CompiledQuery, type Kysely, type QueryResult, sql } from 'kysely'
import { FieldError } from '../base/errors.ts'
import type { StoreBackend } from './backends/StoreBackend.ts'
import type { Database } from './Database.ts'
import { classify, corruptRow } from './databaseErrors.ts'
import { DERIVED, INDEXES, type Row, type TableName, type Tables } from './model.ts'
import type { ReadCache } from './ReadCache.ts'
import { type Lookup, lookupKey } from './Reads.ts'

// Kysely's types cannot follow a table name chosen at run time: the generic helpers see every
// table as id + data + string columns, and the row types come from `Tables`.
type DocumentTable = { id: string; data: string } & Record<string, string | null>
type AnyDb = Kysely<Record<string, DocumentTable>>
const anyDb = (db: Kysely<Database>) => db as unknown as AnyDb

/** Refuses a lookup by a field that has no column (so no index) in the database. */
export function indexed(table: TableName, field: string): void {
  if (!(INDEXES[table] as string[]).includes(field))
    throw new Error(`${table}.${field} has no index (add a column and a migration)`)
}

/** A stored row's JSON document, parsed; a document that does not parse is a damaged row. */
export function decodeRow<T extends TableName>(table: T, id: string, data: string): Tables[T] {
  try {
    return JSON.parse(data) as Tables[T]
  } catch {
    throw corruptRow(table, id)
  }
}

/** A row ready to insert: its table and its columns' values (`Queries.rowValues`). */
export interface RowValues {
  table: TableName
  values: (string | null)[]
}

/** One kind of lookup of `Queries.lookupMany`: its name in the statement's key, and its values. */
interface Kind {
  name: string
  lookup: Lookup
  /** Each value, with the array its rows go to (a lookup by id or by field). */
  values: Map<string, string[] | undefined>
}

/** What `Store.pageBy` reads: rows whose `field` is `value`, in `by` order, from just past `after`. */
export interface PageByOptions<T extends TableName> {
  field: keyof Tables[T] & string
  value: string
  /**
   * An indexed column (with `field`, an index's columns), or `id`, compared as text. Unique per
   * row for a walk page after page; a column with ties (jobs' `runAfter`) skips the rows tied with
   * a page's last one, so it is read for its first pages only.
   */
  by: keyof Tables[T] & string
  /** A value of `by`: the page starts just past it. @default the first row */
  after?: string | undefined
  limit: number
  /** Largest `by` first. @default false */
  descending?: boolean
}

/** Runs one compiled query: through Kysely's pool, or on a transaction's own connection. */
export type Execute = (query: CompiledQuery) => Promise<QueryResult<Record<string, unknown>>>

/**
 * True for a value no row can hold: PostgreSQL's text cannot hold U+0000 (it refuses the whole
 * statement), so a lookup by such a value finds nothing on every backend, without a statement, and
 * a row with such an id or indexed field is refused (`rowValues`). Documents are JSON, where the
 * character is escaped, so request values holding it (a text payload) are kept there as they are.
 */
const unstorable = (value: string) => value.includes('\u0000')

/** Stands in for a parameter while a shape is compiled (never sent to a database). */
const MARKER = '__latchkey_parameter_'

/**
 * The service's few query shapes, each built and compiled by Kysely once per store and table
 * (compiling is a fifth of a request's CPU otherwise), then run with fresh parameters. The shape
 * is compiled with marker values, so each parameter's position is known. An error a statement
 * throws is classified by the store's backend as it passes (`isDatabaseError` then knows it).
 */
export class Queries {
  private readonly cache = new Map<string, { sql: string; order: number[] }>()
  private readonly compiler: AnyDb

  constructor(
    db: Kysely<Database>,
    private readonly backend: StoreBackend,
  ) {
    this.compiler = anyDb(db)
  }

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
    try {
      return await db(
        CompiledQuery.raw(
          sql,
          order.map((i) => values[i]),
        ),
      )
    } catch (error) {
      classify(this.backend, error)
      throw error
    }
  }

  /** The row's JSON document, unparsed. */
  private async getData(db: Execute, table: TableName, id: string): Promise<string | undefined> {
    if (unstorable(id)) return undefined
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

  /** A row by id, through `cache` when one is given (`StoreBackend.cachesReads`). */
  async get<T extends TableName>(
    db: Execute,
    table: T,
    id: string,
    cache?: ReadCache,
  ): Promise<Tables[T] | undefined> {
    const load = () => this.getData(db, table, id)
    const data = cache ? await cache.read(table, `get\u0000${id}`, load) : await load()
    return data === undefined ? undefined : decodeRow(table, id, data)
  }

  /**
   * Documents read without their ids, parsed; when one does not parse, the rows are read again
   * with their ids (`where`: the same lookup) to name the damaged one.
   */
  private async decodeAll<T extends TableName>(
    db: Execute,
    table: T,
    documents: string[],
    where?: { field: string; value: string },
  ): Promise<Tables[T][]> {
    try {
      return documents.map((data) => JSON.parse(data) as Tables[T])
    } catch {
      const { rows } = await this.run(
        db,
        where ? `locate:${table}:${where.field}` : `locate:${table}`,
        (p) => {
          const select = this.compiler.selectFrom(table as string).select(['id', 'data'])
          return where ? select.where(where.field, '=', p(0)) : select
        },
        where ? [where.value] : [],
      )
      for (const row of rows) decodeRow(table, row.id as string, row.data as string)
      // Nothing damaged is there now (it was rewritten since): name the lookup instead.
      throw corruptRow(table, where ? `(${where.field} = ${where.value})` : '(unknown)')
    }
  }

  /** The JSON documents of the rows whose `field` is `value`, in id order, unparsed. */
  private async findData(db: Execute, table: TableName, field: string, value: unknown): Promise<string[]> {
    if (unstorable(String(value))) return []
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
    { field, value }: { field: string; value: unknown },
    cache?: ReadCache,
  ): Promise<Tables[T][]> {
    indexed(table, field)
    if (value === undefined || value === null) return []
    const load = () => this.findData(db, table, field, value)
    const found = cache
      ? await cache.read(table, `find\u0000${field}\u0000${String(value)}`, load)
      : await load()
    return this.decodeAll(db, table, found, { field, value: String(value) })
  }

  /** The backend's array statements (`readsAhead`, `writesAtOnce`), which only it knows how to write. */
  private get arrays() {
    if (!this.backend.arrays) throw new Error(`${this.backend.name} has no array statements`)
    return this.backend.arrays
  }

  /**
   * Lookups, of one request or several, in one statement, with array parameters (the backend's
   * `arrays.anyOf`, where it `readsAhead`): one branch per kind of lookup (a table and the field it is
   * looked up by), each taking every value of that kind at once, so the statement's shape depends
   * on which kinds are read, not on how many requests are in the batch. Answers, keyed as
   * `Prefetched` reads them, each lookup's rows in id order, for all the requests together: one
   * statement, so one snapshot. With `ids`, also the ids of each array of rows answered, in the
   * same order (keyed by the array).
   */
  async lookupMany(
    db: Execute,
    lookups: readonly Lookup[],
    ids?: Map<string[], string[]>,
  ): Promise<Map<string, string[]>> {
    // Each kind's values, each with the array its rows go to (a lookup by id or by field: the
    // array `found` holds under its key, shared by every lookup of the same key). Kinds by table,
    // then by field (a lookup by id: `id`), or by a name of their own for `via` and `from`.
    const kinds = new Map<TableName, Map<string, Kind>>()
    let count = 0
    const found = new Map<string, string[]>()
    // With `ids`: each array of rows' ids, in the same order (none for an array without rows).
    const idOf = (rows: string[], id: string) => {
      if (!ids) return
      const list = ids.get(rows)
      if (list) list.push(id)
      else ids.set(rows, [id])
    }
    for (const lookup of lookups) {
      let kind: string
      let value: string
      let rows: string[] | undefined
      if ('from' in lookup) {
        kind = `${lookup.field}=${lookup.from.table}.${lookup.from.column}`
        value = lookup.from.id
      } else if ('via' in lookup) {
        kind = `<${lookup.via.table}.${lookup.via.column}.${lookup.via.field}`
        value = lookup.via.value
      } else {
        // A lookup that finds nothing is known to find nothing (a `via` is keyed by what it
        // finds, a `from` by the column's value its statement answers).
        const key = lookupKey(lookup)
        rows = found.get(key)
        if (!rows) {
          rows = []
          found.set(key, rows)
        }
        if ('id' in lookup) {
          kind = 'id'
          value = lookup.id
        } else {
          kind = lookup.field
          value = lookup.value
        }
      }
      if (unstorable(value)) continue
      let ofTable = kinds.get(lookup.table)
      if (!ofTable) {
        ofTable = new Map()
        kinds.set(lookup.table, ofTable)
      }
      let entry = ofTable.get(kind)
      if (!entry) {
        // As the statement's key names it: `<table>.<field>`, `<table>.<field>=<table>.<column>`, `<table><…`.
        entry = { name: `${lookup.table}${kind[0] === '<' ? '' : '.'}${kind}`, lookup, values: new Map() }
        ofTable.set(kind, entry)
        count++
      }
      entry.values.set(value, rows)
    }
    if (count === 0) return found
    const branches = [...kinds.values()].flatMap((ofTable) => [...ofTable.values()])
    branches.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    const order = branches.map((entry) => entry.name)
    const { anyOf } = this.arrays
    const { rows } = await this.run(
      db,
      `many:${order.join(',')}`,
      (p) => {
        const branch = ({ lookup }: { lookup: Lookup }, n: number) => {
          // One row per row found, and one (with no id) for a row whose column matches nothing:
          // `k` is the column's value either way, so an empty answer is known to be empty.
          if ('from' in lookup) {
            const { from } = lookup
            return this.compiler
              .selectFrom(`${from.table} as o`)
              .leftJoin(`${lookup.table} as t`, `t.${lookup.field}`, `o.${from.column}`)
              .select([
                sql.lit(n).as('n'),
                sql.ref(`o.${from.column}`).as('k'),
                sql.ref('t.id').as('id'),
                sql.ref('t.data').as('data'),
              ])
              .where(anyOf(sql.ref('o.id'), sql.val(p(n))))
          }
          const key = 'field' in lookup ? lookup.field : 'id'
          const select = this.compiler
            .selectFrom(lookup.table as string)
            .select([sql.lit(n).as('n'), sql.ref(key).as('k'), 'id', 'data'])
          if (!('via' in lookup)) return select.where(anyOf(sql.ref(key), sql.val(p(n))))
          const { via } = lookup
          return select.where('id', 'in', (eb) =>
            eb
              .selectFrom(via.table as string)
              .select(via.column)
              .where(anyOf(sql.ref(via.field), sql.val(p(n)))),
          )
        }
        let query = branch(branches[0]!, 0)
        branches.slice(1).forEach((entry, k) => {
          query = query.unionAll(branch(entry, k + 1))
        })
        return query.orderBy('n').orderBy('id')
      },
      branches.map((entry) => [...entry.values.keys()]),
    )
    // The documents a `from` lookup's key holds so far, each once: its rows repeat, one for each
    // row of `from.table` with that column value, and a lookup by field may have read them too.
    let taken: Map<string, Set<string>> | undefined
    for (const row of rows) {
      const { lookup, values } = branches[Number(row.n)]!
      const data = row.data as string
      const id = row.id as string | null | undefined
      if ('from' in lookup) {
        if (row.k === null || row.k === undefined) continue
        const key = lookupKey({ table: lookup.table, field: lookup.field, value: row.k as string })
        let rows = found.get(key)
        if (!rows) {
          rows = []
          found.set(key, rows)
        }
        if (id === null || id === undefined) continue
        taken ??= new Map()
        let seen = taken.get(key)
        if (!seen) {
          seen = new Set(rows)
          taken.set(key, seen)
        }
        if (seen.has(data)) continue
        seen.add(data)
        rows.push(data)
        idOf(rows, id)
      } else if ('via' in lookup) {
        const rows = [data]
        found.set(lookupKey({ table: lookup.table, id: id as string }), rows)
        idOf(rows, id as string)
      } else {
        const rows = values.get(row.k as string)
        if (!rows) continue
        rows.push(data)
        idOf(rows, id as string)
      }
    }
    return found
  }

  /**
   * Up to `limit` rows of `table` whose ids come after `afterId`, in id order: a walk through a
   * whole table in steps, each resuming after the last id the one before it read.
   */
  async page<T extends TableName>(
    db: Execute,
    table: T,
    { afterId, limit }: { afterId: string; limit: number },
  ): Promise<Tables[T][]> {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`a page holds at least one row, not ${limit}`)
    const { rows } = await this.run(
      db,
      `page:${table}`,
      (p) =>
        this.compiler
          .selectFrom(table as string)
          .select(['id', 'data'])
          .where('id', '>', p(0))
          .orderBy('id')
          .limit(sql<number>`${p(1)}`),
      [afterId, limit],
    )
    return rows.map((row) => decodeRow(table, row.id as string, row.data as string))
  }

  /** A keyset page of the rows whose `field` is `value`, in `by` order (`Store.pageBy`). */
  async pageBy<T extends TableName>(db: Execute, table: T, options: PageByOptions<T>): Promise<Tables[T][]> {
    const { field, value, by, after, limit, descending = false } = options
    indexed(table, field)
    // The id is the primary key: indexed in every table.
    if (by !== 'id') indexed(table, by)
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`a page holds at least one row, not ${limit}`)
    if (unstorable(value) || (after !== undefined && unstorable(after))) return []
    const direction = descending ? 'desc' : 'asc'
    const { rows } = await this.run(
      db,
      `pageBy:${table}:${field}:${by}:${direction}:${after === undefined ? 'first' : 'next'}`,
      (p) => {
        let query = this.compiler
          .selectFrom(table as string)
          .select(['id', 'data'])
          .where(field as string, '=', p(0))
        if (after !== undefined) query = query.where(by as string, descending ? '<' : '>', p(1))
        return query.orderBy(by as string, direction).limit(sql<number>`${p(2)}`)
      },
      [value, after ?? null, limit],
    )
    return rows.map((row) => decodeRow(table, row.id as string, row.data as string))
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
    return this.decodeAll(
      db,
      table,
      rows.map((row) => row.data as string),
    )
  }

  async count(db: Execute, table: TableName, field: string, value: unknown): Promise<number> {
    indexed(table, field)
    if (unstorable(String(value))) return 0
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

  /** A row as its table's columns take it: id, JSON document, then each indexed field. */
  rowValues(table: TableName, row: Row): RowValues {
    const fields = INDEXES[table] as string[]
    const derived = DERIVED[table] as Record<string, (row: Row) => string | undefined> | undefined
    // A derived field is a column only: its document never holds one (a writer's is not kept).
    const document = derived ? withoutKeys(row, Object.keys(derived)) : row
    const values = [
      row.id,
      JSON.stringify(document),
      ...fields.map((field) => {
        const compute = derived?.[field]
        const value = compute ? compute(row) : (row as unknown as Record<string, unknown>)[field]
        return value === undefined || value === null ? null : String(value)
      }),
    ]
    values.forEach((value, i) => {
      if (i !== 1 && value !== null && unstorable(value))
        throw new FieldError({
          message: `${i === 0 ? 'an id' : `a ${fields[i - 2]}`} cannot hold the character U+0000`,
        })
    })
    return { table, values }
  }

  /** The columns of `table` with markers from `first` on (id, data, then the indexed fields). */
  private columns(table: TableName, p: (i: number) => string, first = 0): DocumentTable {
    const columns: DocumentTable = { id: p(first), data: p(first + 1) }
    ;(INDEXES[table] as string[]).forEach((field, index) => {
      columns[field] = p(first + index + 2)
    })
    return columns
  }

  /** Inserts `row`, or replaces the row with its id. */
  async put(db: Execute, table: TableName, row: Row): Promise<void> {
    await this.run(
      db,
      `put:${table}`,
      (p) => {
        const columns = this.columns(table, p)
        const { id: _, ...update } = columns
        return this.compiler
          .insertInto(table as string)
          .values(columns)
          .onConflict((conflict) => conflict.column('id').doUpdateSet(update))
      },
      this.rowValues(table, row).values,
    )
  }

  /**
   * Inserts rows, of one request or several, in one statement, with array parameters (the
   * backend's `arrays.insertFromArrays`, where it `writesAtOnce`), so the statement's shape
   * depends on which tables are written, not on how many rows. All or
   * nothing: a row whose id (or any unique field) exists fails the whole statement. With
   * `replace`, a row whose id exists is replaced (as `put`; each id at most once per table).
   */
  async insertMany(
    db: Execute,
    rows: readonly RowValues[],
    { replace = false }: { replace?: boolean } = {},
  ): Promise<void> {
    await this.fromArrays(db, rows, { replace })
  }

  /**
   * `insertMany` of rows that each belong to a row of `table` (`owners`, one per row, null for
   * none), in one statement that lets a row in only while its owner exists and rewrites each
   * owner unchanged (`arrays.insertFromArrays`' `owners`): a transaction that deletes an owner
   * and began before the statement conflicts with it. Returns the owners found; the rows of the
   * others were left out.
   */
  async insertOwned(
    db: Execute,
    rows: readonly RowValues[],
    { table, owners }: { table: TableName; owners: readonly (string | null)[] },
  ): Promise<Set<string>> {
    const result = await this.fromArrays(db, rows, { owners: { table, of: owners } })
    return new Set(result.rows.map((row) => String(row.id)))
  }

  private fromArrays(
    db: Execute,
    rows: readonly RowValues[],
    {
      replace = false,
      owners,
    }: { replace?: boolean; owners?: { table: TableName; of: readonly (string | null)[] } },
  ) {
    // Each table's first array parameter, then each table's columns' arrays (and its rows'
    // owners), in table order; the owners' ids last.
    const width = owners ? 1 : 0
    const startOf = new Map<TableName, number>()
    for (const row of rows) startOf.set(row.table, 0)
    const tables = [...startOf.keys()].sort()
    const columns = tables.map((table) => ['id', 'data', ...(INDEXES[table] as string[])])
    const starts: number[] = []
    let next = 0
    columns.forEach((names, k) => {
      starts.push(next)
      startOf.set(tables[k]!, next)
      next += names.length + width
    })
    const values: (string | null)[][] = []
    for (let k = 0; k < next; k++) values.push([])
    rows.forEach((row, index) => {
      const start = startOf.get(row.table)!
      const columnValues = row.values
      for (let i = 0; i < columnValues.length; i++) values[start + i]!.push(columnValues[i]!)
      if (owners) values[start + columnValues.length]!.push(owners.of[index] ?? null)
    })
    const ids = owners ? [...new Set(owners.of.filter((id) => id !== null))] : []
    const { insertFromArrays } = this.arrays
    return this.run(
      db,
      `${replace ? 'replaceMany' : owners ? `insertOwned:${owners.table}` : 'insertMany'}:${tables.join(',')}`,
      (p) => {
        const statement = insertFromArrays(
          tables.map((table, k) => ({
            table,
            columns: columns[k]!,
            arrays: columns[k]!.map((_, i) => sql.val(p(starts[k]! + i))),
            ...(owners ? { owners: sql.val(p(starts[k]! + columns[k]!.length)) } : {}),
          })),
          { replace, ...(owners ? { owners: { table: owners.table, ids: sql.val(p(next)) } } : {}) },
        )
        return { compile: () => statement.compile(this.compiler) }
      },
      owners ? [...values, ids] : values,
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
    try {
      await db(statement.compile(this.compiler))
    } catch (error) {
      classify(this.backend, error)
      throw error
    }
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

/** `row` without `keys` (a copy when it holds any). */
function withoutKeys(row: Row, keys: string[]): Row {
  if (!keys.some((key) => key in row)) return row
  const copy = { ...row } as Record<string, unknown>
  for (const key of keys) delete copy[key]
  return copy as unknown as Row
}
