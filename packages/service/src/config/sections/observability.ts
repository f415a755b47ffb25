import { z } from 'zod'
import { LOG_LEVELS, type LogFormat, type LogLevel } from '../../observability/logger.ts'
import { DEFAULT_DRAIN_SECONDS } from '../../server/runServer.ts'

export const observabilitySection = z
  .strictObject({
    admin_port: z
      .int({ error: 'must be a whole number from 0 to 65535' })
      .min(0, { error: 'must be a whole number from 0 to 65535' })
      .max(65535, { error: 'must be a whole number from 0 to 65535' })
      .optional()
      .describe(
        'Port of the admin listener: `GET /metrics` (Prometheus text), `/livez` and `/readyz`; 0 picks a free one. Unset: no admin listener and no metrics kept.',
      ),
    admin_host: z
      .string({ error: 'must be a host name or address (a string)' })
      .min(1)
      .default('127.0.0.1')
      .describe(
        'Interface of the admin listener. Metrics are for the operator: keep it on loopback or a private network.',
      ),
    log_format: z
      .enum(['json', 'pretty'], { error: 'must be "json" or "pretty"' })
      .default('json')
      .describe(
        'Log lines on stderr: `json` (one object per request and per notable event, for a log pipeline) or `pretty` (readable, for a terminal).',
      ),
    log_level: z
      .enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })
      .default('info')
      .describe(
        'The least severe level logged: `debug` adds probes and transaction reruns; `silent` logs nothing.',
      ),
    drain_seconds: z
      .number({ error: 'must be a number of seconds from 0 to 3600' })
      .min(0, { error: 'must be a number of seconds from 0 to 3600' })
      .max(3600, { error: 'must be a number of seconds from 0 to 3600' })
      .default(DEFAULT_DRAIN_SECONDS)
      .describe(
        'On SIGTERM/SIGINT, once `server.drain_grace_seconds` is over: how long the requests taken and job workers get to finish before their connections are closed.',
      ),
  })
  .describe('Metrics, logs, probes and graceful drain (see docs/operations.md).')

export type ObservabilitySection = z.infer<typeof observabilitySection>

/** What `runServer` and the service's telemetry take (`observability()`, `runServer` options). */
export interface ObservabilityOptions {
  adminPort: number | undefined
  adminHost: string
  logFormat: LogFormat
  logLevel: LogLevel
  drainSeconds: number
}

export function observabilityOptions(parsed: ObservabilitySection): ObservabilityOptions {
  return {
    adminPort: parsed.admin_port,
    adminHost: parsed.admin_host,
    logFormat: parsed.log_format,
    logLevel: parsed.log_level,
    drainSeconds: parsed.drain_seconds,
  }
}
