// Node only: serves a service on a port, with an admin listener for metrics and probes, and stops
// it gracefully on SIGTERM/SIGINT (the CLI's `dev` and `start` use it).
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import type { Service } from '../assembly/createService.ts'
import { ServiceError, UnavailableError } from '../kernel/base/errors.ts'
import { reportUnexpected, setUnexpectedErrorLogger } from '../kernel/base/ServiceLogger.ts'
import type { Logger } from '../observability/logger.ts'
import type { Metrics } from '../observability/metrics.ts'
import { capturePeer } from '../pipeline/originPolicy.ts'

/** How long in-flight requests may take to finish once the grace period is over. */
export const DEFAULT_DRAIN_SECONDS = 20

/**
 * How long requests are still served after SIGTERM, with `/readyz` answering 503, so that a load
 * balancer takes the instance out before it stops taking requests (`start`; `dev` uses 0.5).
 */
export const DEFAULT_DRAIN_GRACE_SECONDS = 5

/** `dev`'s grace period: short, a local service has no load balancer to wait for. */
export const DEV_DRAIN_GRACE_SECONDS = 0.5

/**
 * Signals within this long of the first count as that one: a terminal's Ctrl-C and systemd's
 * `KillMode=control-group` signal every process of the group, and a wrapper (npx, tsx, npm) that
 * forwards what it got delivers the same signal a second time.
 */
export const SIGNAL_WINDOW_MS = 2000

/** After the requests taken are answered, the listener closes once no connection came for this long. */
const QUIET_MS = 100

/** How long the listener waits for the first request of a connection it took before closing it. */
const FRESH_MS = 2000
/**
 * How long a kept-alive connection may sit between two requests before the server closes it (Node's
 * default is 5 s). The timer runs from the end of an answer until the next request is read, so a
 * process whose event loop is slow to come back to the socket (a starved CPU under load: the
 * webhooks bench at load 15 on 2 cores) closed connections whose next request was already sent,
 * unread, and the client saw ECONNRESET. A minute, above the 60 s load balancers keep their
 * connections to a backend, so the balancer always closes first.
 */
export const KEEP_ALIVE_MS = 65_000

/**
 * Once the requests taken are answered, the longest the listener waits for that quiet moment: clients
 * that keep connecting (no load balancer in front, or one slow to take the instance out) are answered
 * 503 meanwhile, and must not hold the drain open until its deadline.
 */
const SETTLE_MS = FRESH_MS + QUIET_MS

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
  /**
   * Seconds requests are still taken and served after SIGTERM (while `/readyz` answers 503 and
   * answers close their connections). @default 5
   */
  drainGraceSeconds?: number | undefined
  /** Seconds in-flight requests and job workers get to finish after the grace period. @default 20 */
  drainSeconds?: number | undefined
  /** The metrics `GET /metrics` renders (the same object passed as the service's `events`). */
  metrics?: Metrics | undefined
  /** Where the server logs its start and drain. */
  logger?: Logger | undefined
  /**
   * Stop on SIGTERM and SIGINT, then exit the process with 0 (signals within `SIGNAL_WINDOW_MS` of
   * the first count once; one after that exits at once, with 1). Without it, call `stop()`.
   * @default true
   */
  handleSignals?: boolean
  /**
   * What answers the service's requests: the app's `fetch` behind a wrapper (`start` puts the
   * trusted-proxy check in front of it).
   * @default service.app.fetch
   */
  fetch?: (request: Request, env?: unknown) => Response | Promise<Response>
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
   * Drains and closes: turns `/readyz` 503 at once and keeps serving for the grace period (every
   * answer closes its connection, so kept-alive connections end between requests); then answers
   * anything new 503, lets the requests taken finish until the deadline (then closes their
   * connections), stops listening, drains the service's job workers, closes the service (crypto
   * workers, store) and the admin listener. Later calls return the same promise.
   */
  stop(): Promise<{ cut: number }>
}

/**
 * Serves `service` on `options.host:port` (and the admin listener, if asked) and resolves once both
 * listen; rejects with the listener's error (EADDRINUSE) after closing what it opened.
 */
export async function runServer(service: Service, options: RunServerOptions): Promise<RunningServer> {
  const { runtime } = service
  // A service whose crypto workers cannot load would answer every signing 500: it does not start.
  await runtime.crypto.ready?.()
  const drainMs = (options.drainSeconds ?? DEFAULT_DRAIN_SECONDS) * 1000
  const graceMs = (options.drainGraceSeconds ?? DEFAULT_DRAIN_GRACE_SECONDS) * 1000
  const serveRequest = options.fetch ?? service.app.fetch
  let inFlight = 0
  /** Requests taken to be served (not refused by the drain) that have not been answered yet. */
  let working = 0
  let idle: (() => void) | undefined
  /** Past the grace period: what arrives is answered 503. */
  let refusing = false
  /**
   * Each connection's peer address, read as the connection is taken: a client that resets its
   * connection right after its request leaves `socket.remoteAddress` undefined by the time a
   * handler asks, and its requests would go uncharged to the budgets kept per client address.
   */
  const peers = new WeakMap<Socket, string | undefined>()
  const server = serve({
    fetch: (
      request: Request,
      received: {
        incoming?: { socket?: Socket }
        outgoing?: { once(event: 'close', listener: () => void): unknown }
      },
    ) => {
      const socket = received?.incoming?.socket
      // The peer as the connection came (a request that arrives over it later still has it).
      const env =
        socket === undefined
          ? capturePeer(received)
          : { ...received, peer: { address: peers.get(socket) ?? peerAddress(socket) } }
      // The body is read first: a connection closed with unread bytes is reset, not ended, and the
      // client would see ECONNRESET rather than the 503.
      if (refusing) return request.arrayBuffer().then(drainingResponse, drainingResponse)
      const outgoing = env?.outgoing
      if (outgoing) {
        working++
        outgoing.once('close', () => {
          working--
          if (working === 0) idle?.()
        })
      }
      return serveRequest(request, env)
    },
    port: options.port,
    hostname: options.host,
  }) as Server
  server.keepAliveTimeout = KEEP_ALIVE_MS
  // Above the keep-alive, as Node requires for a request's headers on a kept-alive connection.
  server.headersTimeout = KEEP_ALIVE_MS + 1000
  let lastConnectionAt = 0
  /** Connections that have not sent a request yet, with when they came. */
  const fresh = new Map<Socket, number>()
  server.on('connection', (socket: Socket) => {
    peers.set(socket, peerAddress(socket))
    lastConnectionAt = performance.now()
    fresh.set(socket, lastConnectionAt)
    socket.once('close', () => fresh.delete(socket))
  })
  // Counted from the request's arrival to its response's last byte on the socket (not to the
  // handler's return): a drain that closes connections once none is in flight cuts no answer.
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    fresh.delete(request.socket)
    inFlight++
    response.once('close', () => {
      inFlight--
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

  /** A connection that came recently and whose request has not arrived yet (a loaded client). */
  const awaitingRequest = () => {
    const now = performance.now()
    for (const at of fresh.values()) if (now - at < FRESH_MS) return true
    return false
  }
  let stopped: Promise<{ cut: number }> | undefined
  const stop = () => {
    stopped ??= (async () => {
      const started = performance.now()
      runtime.emit('server.draining', { inFlight })
      // Readiness turns 503 and answers close their connections at once; requests are still taken
      // and served for the grace period, while a load balancer takes the instance out.
      runtime.lifecycle.announceDrain()
      if (graceMs > 0) await new Promise((resolve) => setTimeout(resolve, graceMs))
      // Past the grace: new requests are answered 503 (never a reset), job workers hand back, and
      // the requests taken get until the deadline to finish.
      refusing = true
      const drained = service.drain(AbortSignal.timeout(drainMs))
      // Until the requests taken are answered and no connection came for a moment (one the kernel
      // queued but the server had not taken yet would be reset when the listener closes).
      const deadline = performance.now() + drainMs
      let settleBy = Number.POSITIVE_INFINITY
      while (performance.now() < deadline) {
        const now = performance.now()
        if (working === 0) {
          settleBy = Math.min(settleBy, now + SETTLE_MS)
          if (now >= settleBy || (now - lastConnectionAt >= QUIET_MS && !awaitingRequest())) break
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, working > 0 ? Math.max(0, deadline - performance.now()) : 10)
          idle = () => {
            clearTimeout(timer)
            resolve()
          }
        })
      }
      idle = undefined
      const cut = working
      // Stop listening, close the connections between requests, give the 503s being written a
      // moment, then close whatever is left.
      server.close()
      server.closeIdleConnections()
      for (let waited = 0; inFlight > cut && waited < 1000; waited += 10)
        await new Promise((resolve) => setTimeout(resolve, 10))
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

  // Unexpected errors (a bug met by a request, a failing crypto worker) go through the logger.
  if (options.logger) setUnexpectedErrorLogger(options.logger)
  if (options.handleSignals ?? true) {
    // This process is the service's: what nothing caught is logged (a JSON line in JSON mode,
    // not Node's plain-text stack) before the process exits as Node would.
    const fatal = (where: string) => (error: unknown) => {
      reportUnexpected(error, where)
      options.logger?.flush()
      process.exit(1)
    }
    process.on('uncaughtException', fatal('uncaughtException'))
    process.on('unhandledRejection', fatal('unhandledRejection'))
    let firstSignalAt: number | undefined
    const onSignal = (signal: NodeJS.Signals) => {
      const now = performance.now()
      if (firstSignalAt !== undefined) {
        // The same signal again (the process group's and a wrapper's forward): one drain.
        if (now - firstSignalAt < SIGNAL_WINDOW_MS) return
        // Another one later: the operator does not want to wait.
        options.logger?.warn({ signal }, 'second signal: exiting without finishing the drain')
        options.logger?.flush()
        process.exit(1)
      }
      firstSignalAt = now
      void stop().then(
        () => process.exit(0),
        (error: Error) => {
          reportUnexpected(error, 'drain')
          options.logger?.flush()
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
  options.logger?.info(
    { url, adminUrl: adminUrl ?? null, drainGraceSeconds: graceMs / 1000, drainSeconds: drainMs / 1000 },
    'listening',
  )
  return {
    url,
    port: (server.address() as AddressInfo).port,
    adminUrl,
    inFlight: () => inFlight,
    stop,
  }
}

/**
 * What a request arriving after the grace period gets: 503 and the connection closed, so the
 * client sends it again elsewhere; nothing was done.
 */
function drainingResponse(): Response {
  const error = new UnavailableError({
    code: 'STORAGE_UNAVAILABLE',
    message: 'the service is shutting down; nothing was done: send the request again',
  })
  return new Response(JSON.stringify(error.toBody()), {
    status: 503,
    headers: { 'Content-Type': 'application/json', Connection: 'close', 'Retry-After': '1' },
  })
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
export type ListenErrorType = ListenError & { name: 'ListenError' }
export class ListenError extends ServiceError {
  override name = 'ListenError'
  readonly host: string
  readonly port: number
  /** The flag that sets this port. */
  readonly flag: string
  /** The system's error code (`EADDRINUSE`, `EADDRNOTAVAIL`…). */
  readonly code: string | undefined
  constructor(options: { host: string; port: number; flag: string; code: string | undefined; cause: Error }) {
    super(options.cause.message, { cause: options.cause })
    this.host = options.host
    this.port = options.port
    this.flag = options.flag
    this.code = options.code
  }
}

function listening(server: Server, host: string, port: number, flag: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new ListenError({ host, port, flag, code: error.code, cause: error })),
    )
  })
}

/** A socket's peer address, undefined once the connection is gone (or on a socket with none). */
function peerAddress(socket: Socket): string | undefined {
  const address = socket.remoteAddress
  return typeof address === 'string' && address !== '' ? address : undefined
}

function baseUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`
}
