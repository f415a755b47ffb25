import type { TableName } from './model.ts'

/** Most lookups the read cache holds, and most characters of JSON, before it starts over. */
const LIMIT = 20_000
const CHARACTERS = 32 * 1024 * 1024
/** A lookup whose documents are longer than this (a big list) is not kept. */
const LARGEST = 256 * 1024

/** Characters of JSON in a cached lookup (one document, none, or a list of them). */
const sizeOf = (value: unknown): number =>
  typeof value === 'string'
    ? value.length
    : Array.isArray(value)
      ? value.reduce((sum: number, item) => sum + (typeof item === 'string' ? item.length : 0), 0)
      : 0

/**
 * Committed documents, by table and lookup, each tagged with its table's version: sound only
 * where this process is the database's one writer (`StoreBackend.cachesReads`), since nothing
 * else can change them. A commit that wrote a table moves its version on (`committed`) before the
 * connection is free for the next read, so no read returns a document older than the last commit.
 * Documents are kept as JSON text and parsed on every read, so no caller shares one.
 */
export class ReadCache {
  private readonly entries = new Map<string, { version: number; value: unknown }>()
  private characters = 0
  private readonly versions = new Map<TableName, number>()

  /** What `load` reads for `key` in `table`: kept, and loaded again only after a commit wrote `table`. */
  async read<V>(table: TableName, key: string, load: () => Promise<V>): Promise<V> {
    const version = this.versions.get(table) ?? 0
    const cacheKey = `${table}\u0000${key}`
    const hit = this.entries.get(cacheKey)
    if (hit && hit.version === version) return hit.value as V
    const value = await load()
    // A commit that ran while this read waited made its result stale: do not keep it.
    const size = sizeOf(value)
    if ((this.versions.get(table) ?? 0) === version && size <= LARGEST) {
      if (this.entries.size >= LIMIT || this.characters + size > CHARACTERS) {
        this.entries.clear()
        this.characters = 0
      }
      const replaced = this.entries.get(cacheKey)
      if (replaced) this.characters -= sizeOf(replaced.value)
      this.entries.set(cacheKey, { version, value })
      this.characters += size
    }
    return value
  }

  /** A commit wrote `tables`: what was read of them before is stale. */
  committed(tables: Iterable<TableName>): void {
    for (const table of tables) this.versions.set(table, (this.versions.get(table) ?? 0) + 1)
  }
}
