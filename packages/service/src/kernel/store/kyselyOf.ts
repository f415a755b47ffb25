import type { Kysely } from 'kysely'
import type { Database } from './Database.ts'

/**
 * Each open store's Kysely instance, kept out of the store's own surface (keyed by the `Store`,
 * typed as any object so that this file and `Store.ts` do not import each other).
 */
const databases = new WeakMap<object, Kysely<Database>>()

/** Called by `Store` as it is made: the one place a store's Kysely instance is handed over. */
export function rememberKysely(store: object, db: Kysely<Database>): void {
  databases.set(store, db)
}

/**
 * The Kysely instance under `store`, for the store's own files (the openers' backup, the contract
 * tests) and for tests that damage rows behind the store's back. Everything else goes through the
 * store's named operations: `npm run graph` refuses an import of this file from outside
 * `kernel/store/` (tests excepted), so no wing, command or check writes SQL of its own.
 */
export function kyselyOf(store: object): Kysely<Database> {
  const db = databases.get(store)
  if (!db) throw new Error('not an open store')
  return db
}
