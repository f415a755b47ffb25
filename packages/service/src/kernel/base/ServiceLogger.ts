/**
 * The logger the service writes its request lines and notable events to: a structured logger with
 * pino's call shape (`logger.info({ field: value }, 'message')`), so a pino instance is one. The
 * service writes only bounded, non-secret fields to it (see `observeRequests` and `logSink`).
 */
export interface ServiceLogger {
  debug(fields: object, message?: string): void
  info(fields: object, message?: string): void
  warn(fields: object, message?: string): void
  error(fields: object, message?: string): void
  /** Whether lines at `level` are written (callers skip building fields that would be dropped). */
  isLevelEnabled?(level: string): boolean
}

/** Where `reportUnexpected` writes: stderr as plain text until a logger is set. */
let unexpectedLogger: ServiceLogger | undefined

/**
 * Sends what `reportUnexpected` reports to `logger` (the CLI sets its JSON or pretty logger);
 * `undefined` goes back to stderr. Returns the previous one.
 */
export function setUnexpectedErrorLogger(logger: ServiceLogger | undefined): ServiceLogger | undefined {
  const previous = unexpectedLogger
  unexpectedLogger = logger
  return previous
}

/**
 * Reports an error nobody expected (a bug, a crypto worker that failed, an uncaught exception):
 * one `error` line with its name, message and stack through the service's logger, so a JSON log
 * stays JSON; `where` says what met it (`request`, `activity`, `crypto-worker`, `uncaughtException`…).
 */
export function reportUnexpected(error: unknown, where: string): void {
  const err =
    error instanceof Error
      ? { type: error.name, message: error.message, stack: error.stack }
      : { type: typeof error, message: String(error) }
  if (unexpectedLogger) unexpectedLogger.error({ where, err }, 'unexpected error')
  else console.error(`unexpected error (${where})`, error)
}
