// Node only: the metrics and logger of a served service, from its operator settings.
import { fanOut } from '../kernel/base/events.ts'
import { createLogger, type LogFormat, type Logger, type LogLevel, logSink } from './logger.ts'
import { createMetrics, type Metrics } from './metrics.ts'

export interface ObservabilitySettings {
  /** Port of the admin listener; metrics are kept only when there is one to read them. */
  adminPort?: number | undefined
  logFormat: LogFormat
  logLevel: LogLevel
}

/**
 * What `createService` and `runServer` get for the settings: metrics when an admin listener serves
 * them, a logger unless the level is `silent`. With neither, the service gets no event sink at all,
 * so nothing is counted or formatted on the request path.
 */
export function observability(settings: ObservabilitySettings): {
  metrics: Metrics | undefined
  logger: Logger | undefined
  serviceOptions: { events?: ReturnType<typeof fanOut>; logger?: Logger }
  serverOptions: { metrics?: Metrics; logger?: Logger }
} {
  const metrics = settings.adminPort === undefined ? undefined : createMetrics()
  const logger =
    settings.logLevel === 'silent'
      ? undefined
      : createLogger({ format: settings.logFormat, level: settings.logLevel })
  const sinks = [...(metrics ? [metrics] : []), ...(logger ? [logSink(logger)] : [])]
  return {
    metrics,
    logger,
    serviceOptions: {
      ...(sinks.length > 0 ? { events: fanOut(sinks) } : {}),
      ...(logger ? { logger } : {}),
    },
    serverOptions: { ...(metrics ? { metrics } : {}), ...(logger ? { logger } : {}) },
  }
}
