import type { TableName, Tables } from './model.ts'
import { decodeRow } from './Queries.ts'
import { anyRows, lookupKey, type Reads } from './Reads.ts'
import { NotInSnapshot } from './Transaction.ts'

/** Where reads of a snapshot run end that its snapshot cannot answer. */
const beyondSnapshot: Reads = {
  get: async () => {
    throw new NotInSnapshot()
  },
  findBy: async () => {
    throw new NotInSnapshot()
  },
  all: async () => {
    throw new NotInSnapshot()
  },
  count: async () => {
    throw new NotInSnapshot()
  },
}

/**
 * Reads answered from what `Store.prefetch` read at once; a read it was not asked for goes to the
 * store. Each read parses its own copy of a document; one that does not parse is reported as a
 * damaged row (`decodeRow`).
 */
export class Prefetched implements Reads {
  constructor(
    private readonly store: Reads,
    private readonly found: ReadonlyMap<string, string[]>,
  ) {}

  /** The same rows, as one snapshot: a read of anything else throws `NotInSnapshot` (`Store.transaction`). */
  alone(): Prefetched {
    return new Prefetched(beyondSnapshot, this.found)
  }

  async get<T extends TableName>(table: T, id: string): Promise<Tables[T] | undefined> {
    const data = this.found.get(lookupKey({ table, id }))
    if (!data) return this.store.get(table, id)
    return data[0] === undefined ? undefined : decodeRow(table, id, data[0])
  }

  async findBy<T extends TableName>(
    table: T,
    field: keyof Tables[T] & string,
    value: unknown,
  ): Promise<Tables[T][]> {
    const data = this.readFor(table, field, value)
    if (!data) return this.store.findBy(table, field, value)
    try {
      return data.map((text) => JSON.parse(text) as Tables[T])
    } catch {
      // A damaged document: the store's own read names its row.
      return this.store.findBy(table, field, value)
    }
  }

  /** Whether a row has `field` equal to `value`: from what was read, without parsing it, when that holds it. */
  async exists<T extends TableName>(
    table: T,
    field: keyof Tables[T] & string,
    value: unknown,
  ): Promise<boolean> {
    const data = this.readFor(table, field, value)
    return data ? data.length > 0 : anyRows(this.store, table, field, value)
  }

  /** What was read for the rows whose `field` equals `value`, unparsed; undefined when it was not read. */
  private readFor(table: TableName, field: string, value: unknown): string[] | undefined {
    return value === undefined || value === null
      ? undefined
      : this.found.get(lookupKey({ table, field, value: String(value) }))
  }

  all<T extends TableName>(table: T): Promise<Tables[T][]> {
    return this.store.all(table)
  }

  count<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown): Promise<number> {
    return this.store.count(table, field, value)
  }
}
