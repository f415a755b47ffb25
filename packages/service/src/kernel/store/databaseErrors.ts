import { ApiError, UnavailableError } from '../base/errors.ts'
import type { ErrorKind, StoreBackend } from './backends/StoreBackend.ts'

/**
 * The errors a store saw and its backend classified as the database's (a conflict, a unique
 * violation, an outage). The pipeline decides on errors without knowing which store threw them
 * (`isDatabaseError`), so the store marks each as it passes; an error object is never changed.
 */
const databaseErrors = new WeakMap<object, Exclude<ErrorKind, 'other'>>()

/** What `error` means, as `backend` classifies it; remembered for `isDatabaseError`. */
export function classify(backend: StoreBackend, error: unknown): ErrorKind {
  if (typeof error !== 'object' || error === null || error instanceof ApiError) return 'other'
  const known = databaseErrors.get(error)
  if (known) return known
  const kind = backend.classify(error)
  if (kind !== 'other') databaseErrors.set(error, kind)
  return kind
}

/** True for an error of the database itself (a conflict to retry, an outage), not of the request. */
export const isDatabaseError = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && databaseErrors.has(error)

/** The answer to a request the database could not take (503), whatever the cause. */
export const unavailable = (_cause: unknown) =>
  new UnavailableError({
    code: 'STORAGE_UNAVAILABLE',
    message: 'the database cannot take this request right now (nothing was changed); try again shortly',
    extra: { retryAfterSeconds: 1 },
  })

/**
 * A stored row whose JSON document does not parse: the database is damaged, not the request. It is
 * answered 503 naming the table and the row (nothing retried: the same bytes would fail again) and
 * logged once per read with the same names, never the row's content.
 */
export function corruptRow(table: string, id: string): ApiError {
  const row = `${table} row ${id.slice(0, 200)}`
  console.error(`stored ${row} is damaged: its JSON document does not parse`)
  return new UnavailableError({
    code: 'STORAGE_UNAVAILABLE',
    message: `the stored ${row} is damaged (its document does not parse); restore the database from a backup`,
  })
}
