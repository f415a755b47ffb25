// Node only (pino): the service's log lines, JSON for machines or pino-pretty for a terminal.
import { pino, destination as pinoDestination, stdTimeFunctions } from 'pino'
import pretty from 'pino-pretty'
import type { EventSink, ServiceEventMap, ServiceEventName } from '../kernel/base/events.ts'
import type { ServiceLogger } from '../kernel/base/ServiceLogger.ts'

export type LogFormat = 'json' | 'pretty'
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export interface LoggerOptions {
  /** `json`: one JSON object per line; `pretty`: coloured, readable lines for a terminal. @default 'json' */
  format?: LogFormat
  /** The least severe level written. @default 'info' */
  level?: LogLevel
  /** The file descriptor lines go to (stderr: stdout carries the `--json` line). @default 2 */
  fd?: number
}

/** A pino logger, flushed on demand (`flush` before the process exits). */
export interface Logger extends ServiceLogger {
  flush(): void
}

/**
 * The service's logger: pino writing to stderr, one JSON line per request and per notable event
 * (`format: 'json'`), or pino-pretty's readable lines (`format: 'pretty'`, what `dev` uses in a
 * terminal). JSON lines are written asynchronously (flushed when the server has drained).
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info'
  const fd = options.fd ?? 2
  const base = {
    level,
    base: { service: 'latchkey' },
    timestamp: stdTimeFunctions.isoTime,
    // Level names rather than pino's numbers: what log queries and people read.
    formatters: { level: (label: string) => ({ level: label }) },
  }
  if (options.format === 'pretty') {
    const stream = pretty({
      destination: fd,
      colorize: false,
      sync: true,
      singleLine: true,
      ignore: 'pid,hostname,service',
    })
    return Object.assign(pino(base, stream), { flush: () => undefined })
  }
  const destination = pinoDestination({ dest: fd, sync: false })
  const logger = pino(base, destination)
  return Object.assign(logger, { flush: () => destination.flushSync() })
}

/** How each event is logged: its level and message (events with no entry are logged at debug). */
const LOGGED: { [K in ServiceEventName]?: { level: 'debug' | 'info' | 'warn'; message: string } } = {
  'signin.otp': { level: 'info', message: 'one-time code' },
  'signin.sessions_revoked': { level: 'info', message: 'sessions revoked' },
  'store.retry': { level: 'debug', message: 'transaction rerun' },
  'store.unavailable': { level: 'warn', message: 'database unavailable' },
  'server.draining': { level: 'info', message: 'draining' },
  'server.drained': { level: 'info', message: 'drained' },
  'send.stalled': { level: 'warn', message: 'sends wait to be broadcast' },
  'send.unstalled': { level: 'info', message: 'sends are broadcast again' },
}

/**
 * The notable events as log lines (`event` names it, `data` is its payload of bounded fields): a sink
 * beside the metrics. Requests have their own lines (`observeRequests`); a crypto job is logged only
 * when it fails.
 */
export function logSink(logger: ServiceLogger): EventSink {
  return {
    emit<K extends ServiceEventName>(name: K, data: ServiceEventMap[K]) {
      if (name === 'http.request' || name === 'crypto.started') return
      if (name === 'crypto.finished') {
        if ((data as ServiceEventMap['crypto.finished']).outcome === 'error')
          logger.warn({ event: name, data }, 'crypto job failed')
        return
      }
      const logged = LOGGED[name] ?? { level: 'debug' as const, message: name }
      if (logger.isLevelEnabled && !logger.isLevelEnabled(logged.level)) return
      logger[logged.level]({ event: name, data }, logged.message)
    },
  }
}
