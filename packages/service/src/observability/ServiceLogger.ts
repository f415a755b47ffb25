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
