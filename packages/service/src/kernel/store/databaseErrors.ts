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

/** The cause of each 503 `unavailable` made, for the operator's log (`unavailableCause`). */
const causes = new WeakMap<object, string>()

/**
 * What made the database unavailable, in words an operator can act on and a log may hold: the
 * error's code (PostgreSQL's SQLSTATE, a socket's errno) and the driver's or server's message,
 * one line, at most 160 characters. Only errors of the database itself come here (a lost or
 * refused connection, a statement past its timeout, a shutdown, conflicts past the reruns, a
 * failed log sync), whose messages name no row's data.
 */
export function describeCause(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error).slice(0, 160)
  const { code, message } = error as { code?: unknown; message?: unknown }
  const text = [typeof code === 'string' ? code : '', typeof message === 'string' ? message : '']
    .filter(Boolean)
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim()
  return (text || (error as Error).name || 'unknown').slice(0, 160)
}

/** A 503 `STORAGE_UNAVAILABLE` that keeps `cause` for the log (`unavailableCause`), never sent. */
function withCause(cause: unknown, message: (why: string) => string, extra = {}): UnavailableError {
  const why = describeCause(cause)
  const error = new UnavailableError({ code: 'STORAGE_UNAVAILABLE', message: message(why), extra })
  causes.set(error, why)
  return error
}

/**
 * The answer to a request the database could not take (503), whatever the cause. It does not say
 * nothing was written: a connection lost with the commit on its way may have committed. A client
 * that sends the same activity again is answered the first one's outcome, so trying again is safe.
 */
export const unavailable = (cause: unknown): UnavailableError =>
  withCause(cause, () => 'the database cannot take this request right now; try again shortly', {
    retryAfterSeconds: 1,
  })

/**
 * What opening a store says when the database cannot be reached (a refused connection or login,
 * a database that does not exist): the operator starting the service reads it, so it says why.
 */
export const unreachable = (cause: unknown): UnavailableError =>
  withCause(cause, (why) => `the database cannot be reached: ${why}`)

/**
 * Why a request was answered 503 `STORAGE_UNAVAILABLE` (`describeCause`), for its log line: the
 * error it was answered with, or the database's own error it was made from; undefined otherwise.
 */
export function unavailableCause(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  return causes.get(error) ?? (isDatabaseError(error) ? describeCause(error) : undefined)
}

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
