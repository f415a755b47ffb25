// Node only: serves a service on a port, with an admin listener for metrics and probes, and stops
// it gracefully on SIGTERM/SIGINT (the CLI's `dev` and `start` use it).
import type { Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import type { Service } from '../createService.ts'
import type { Logger } from '../observability/logger.ts'
import type { Metrics } from '../observability/metrics.ts'

/** How long in-flight requests may take to finish once a drain begins. */
export const DEFAULT_DRAIN_SECONDS = 20

export interface RunServerOptions {
  /** Port of the service; 0 picks a free one. */
  port: number
  /** Interface the service binds. */
  host: string
  /**
   * Port of the admin listener (`GET /metrics`, `/livez`, `/readyz`); 0 picks a free one.
   * @default no admin listener
   */
  adminPort?: number | undefined
  /** Interface of the admin listener: metrics are for the operator, not the internet. @default '127.0.0.1' */
  adminHost?: string | undefined
  /** Seconds in-flight requests and job workers get to finish after SIGTERM. @default 20 */
  drainSeconds?: number | undefined
  /** The metrics `GET /metrics` renders (the same object passed as the service's `events`). */
  metrics?: Metrics | undefined
  /** Where the server logs its start and drain. */
  logger?: Logger | undefined
  /**
   * Stop on SIGTERM and SIGINT, then exit the process with 0 (a second signal exits at once).
   * Without it, call `stop()`.
   * @default true
   */
  handleSignals?: boolean
  /**
   * What answers the service's requests: the app's `fetch` behind a wrapper (`start` puts the
   * trusted-proxy check in front of it).
   * @default service.app.fetch
   */
  fetch?: (request: Request) => Response | Promise<Response>
}

export interface RunningServer {
  /** The service's base URL (a wildcard host shown as 127.0.0.1). */
  url: string
  port: number
  /** The admin listener's base URL, when there is one. */
  adminUrl: string | undefined
  /** Requests being served now. */
  inFlight(): number
  /**
   * Drains and closes: stops accepting, turns `/readyz` 503, lets in-flight requests finish until
   * the deadline (then closes their connections), drains the service's job workers, closes the
   * service (crypto workers, store) and the admin listener. Later calls return the same promise.
   */
  stop(): Promise<{ cut: number }>
}

/**
 * Serves `service` on `options.host:port` (and the admin listener, if asked) and resolves once both
 * listen; rejects with the listener's error (EADDRINUSE) after closing what it opened.
 */
export async function runServer(service: Service, options: RunServerOptions): Promise<RunningServer> {
  const { runtime } = service
  const drainMs = (options.drainSeconds ?? DEFAULT_DRAIN_SECONDS) * 1000
  let inFlight = 0
  let idle: (() => void) | undefined
  const server = serve({
    fetch: options.fetch ?? service.app.fetch,
    port: options.port,
    hostname: options.host,
  }) as Server
  // Counted from the request's arrival to its response's last byte on the socket (not to the
  // handler's return): a drain that closes connections once none is in flight cuts no answer.
  server.on('request', (_request, response: ServerResponse) => {
    inFlight++
    response.once('close', () => {
      inFlight--
      if (inFlight === 0) idle?.()
    })
  })
  const admin =
    options.adminPort === undefined
      ? undefined
      : (serve({
          fetch: adminApp(service, options.metrics).fetch,
          port: options.adminPort,
          hostname: options.adminHost ?? '127.0.0.1',
        }) as Server)
  try {
    await Promise.all([
      listening(server, options.host, options.port, '--port'),
      ...(admin
        ? [listening(admin, options.adminHost ?? '127.0.0.1', options.adminPort!, '--admin-port')]
        : []),
    ])
  } catch (error) {
    server.close()
    admin?.close()
    throw error
  }
  service.store.watchLoad(() => inFlight)
  options.metrics?.watch({
    inFlight: () => inFlight,
    draining: () => runtime.lifecycle.draining,
    ...(service.store.poolUse ? { poolUse: service.store.poolUse } : {}),
    batching: () => service.store.batching(),
  })

  let stopped: Promise<{ cut: number }> | undefined
  const stop = () => {
    stopped ??= (async () => {
      const started = performance.now()
      runtime.emit('server.draining', { inFlight })
      // Readiness turns 503 and job workers start handing back at once; no new connection is taken.
      const drained = service.drain(AbortSignal.timeout(drainMs))
      server.close()
      server.closeIdleConnections()
      if (inFlight > 0)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, drainMs)
          idle = () => {
            clearTimeout(timer)
            resolve()
          }
        })
      const cut = inFlight
      server.closeAllConnections()
      await drained
      await service.close()
      runtime.emit('server.drained', { seconds: (performance.now() - started) / 1000, cut })
      if (admin) {
        admin.closeAllConnections()
        await new Promise((resolve) => admin.close(resolve))
      }
      options.logger?.flush()
      return { cut }
    })()
    return stopped
  }

  if (options.handleSignals ?? true) {
    const onSignal = () => {
      if (stopped) {
        // A second signal: the operator does not want to wait.
        options.logger?.flush()
        process.exit(1)
      }
      void stop().then(
        () => process.exit(0),
        (error: Error) => {
          process.stderr.write(`latchkey-service: drain failed: ${error.message}\n`)
          process.exit(1)
        },
      )
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  }

  const url = baseUrl(options.host, (server.address() as AddressInfo).port)
  const adminUrl = admin
    ? baseUrl(options.adminHost ?? '127.0.0.1', (admin.address() as AddressInfo).port)
    : undefined
  options.logger?.info({ url, adminUrl: adminUrl ?? null, drainSeconds: drainMs / 1000 }, 'listening')
  return {
    url,
    port: (server.address() as AddressInfo).port,
    adminUrl,
    inFlight: () => inFlight,
    stop,
  }
}

/** The admin listener: Prometheus metrics and the same probes as the service's own. */
function adminApp(service: Service, metrics: Metrics | undefined): Hono {
  const app = new Hono()
  app.get('/metrics', async (c) => {
    if (!metrics) return c.text('metrics are off\n', 404)
    return c.body(await metrics.render(), 200, { 'Content-Type': metrics.contentType })
  })
  app.get('/livez', (c) => c.json({ live: true }))
  app.get('/readyz', async (c) => {
    const report = await service.readiness()
    return c.json(report, report.ready ? 200 : 503)
  })
  return app
}

/** A listener could not open (the port is taken, the host is not this machine's). */
export class ListenError extends Error {
  override name = 'ListenError'
  constructor(
    readonly host: string,
    readonly port: number,
    /** The flag that sets this port. */
    readonly flag: string,
    readonly code: string | undefined,
    cause: Error,
  ) {
    super(cause.message, { cause })
  }
}

function listening(server: Server, host: string, port: number, flag: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new ListenError(host, port, flag, error.code, error)),
    )
  })
}

function baseUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`
}
