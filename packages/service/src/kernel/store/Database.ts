import type { INDEXES, TableName } from './model.ts'

/**
 * The database as Kysely sees it: every table has its id, the row as a JSON document, and one
 * column per looked-up field (see `migrations.ts`). The document's type is `Tables[T]`.
 */
export type Database = {
  [T in TableName]: { id: string; data: string } & {
    [F in (typeof INDEXES)[T][number]]: string | null
  }
}
