import type { TableName, Tables } from './model.ts'

/** Read access shared by the store (committed state) and a transaction (its own view). */
export interface Reads {
  get<T extends TableName>(table: T, id: string): Promise<Tables[T] | undefined>
  /** Rows whose indexed `field` equals `value`, in id (creation) order. */
  findBy<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown): Promise<Tables[T][]>
  /** Every row of a table, in id (creation) order. */
  all<T extends TableName>(table: T): Promise<Tables[T][]>
  /** How many rows have `field` equal to `value`. */
  count<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown): Promise<number>
  /**
   * Whether some row has `field` equal to `value`, where that costs less than reading them
   * (`Prefetched`: what it read holds them, unparsed). Use `anyRows`.
   */
  exists?<T extends TableName>(table: T, field: keyof Tables[T] & string, value: unknown): Promise<boolean>
}

/** Whether `reads` has a row of `table` whose indexed `field` equals `value`, parsing none where it can. */
export async function anyRows<T extends TableName>(
  reads: Reads,
  table: T,
  field: keyof Tables[T] & string,
  value: unknown,
): Promise<boolean> {
  if (reads.exists) return reads.exists(table, field, value)
  return (await reads.findBy(table, field, value)).length > 0
}

/**
 * One read of a batch (`Store.prefetch`): a row by id, the rows whose indexed field has a value,
 * the rows whose ids are a column of the rows another indexed field finds (`via`: the users of
 * the API keys with a public key, say), or the rows whose indexed field has the value of a column
 * of one row found by id (`from`: a sub-organization's parent's webhook endpoints, with the
 * organization's `parentOrganizationId`). A `from` is answered as the lookup by field it becomes
 * (`findBy(table, field, <the column's value>)`), rows or none, so a snapshot run can read it.
 */
export type Lookup =
  | { table: TableName; id: string }
  | { table: TableName; field: string; value: string }
  | { table: TableName; via: { table: TableName; field: string; value: string; column: string } }
  | { table: TableName; field: string; from: { table: TableName; id: string; column: string } }

/** Where `Prefetched` keeps what a lookup by id or by field found. */
export const lookupKey = (
  lookup: { table: TableName; id: string } | { table: TableName; field: string; value: string },
) =>
  'id' in lookup
    ? `${lookup.table}\u0000id\u0000${lookup.id}`
    : `${lookup.table}\u0000${lookup.field}\u0000${lookup.value}`
