import type { MiddlewareHandler } from 'hono'
import { ApiError } from '../kernel/base/errors.ts'
import type { HttpMethod, RouteFamily } from '../kernel/base/events.ts'
import type { ServiceLogger } from '../kernel/base/ServiceLogger.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { ObservedEnv } from '../kernel/requestEnv.ts'
import { unavailableCause } from '../kernel/store/Store.ts'

/** The header a request id comes in and goes back out in. */
export const REQUEST_ID_HEADER = 'X-Request-Id'

/** A request id a client may choose: short, printable, nothing a log line could be broken with. */
const WELL_FORMED_ID = /^[A-Za-z0-9._:-]{1,128}$/

const METHODS = new Set<string>(['GET', 'POST', 'OPTIONS', 'HEAD'])

/** The route family of a path: a bounded label for metrics, the `route` field of a log line. */
export function routeFamily(path: string): RouteFamily {
  if (path.startsWith('/public/v1/submit/')) return 'submit'
  if (path.startsWith('/public/v1/query/')) return 'query'
  if (path.startsWith('/public/')) return 'public'
  if (path.startsWith('/v1/')) return 'proxy'
  if (path.startsWith('/dev/')) return 'dev'
  if (path.startsWith('/frame/')) return 'frame'
  if (path === '/livez' || path === '/readyz' || path === '/health') return 'health'
  return 'other'
}

/**
 * The first middleware of the app: gives every request an id (the client's `X-Request-Id` when
 * well formed, else a new one) and returns it, reports the answer as `http.request` (metrics) and
 * writes one log line for it: id, method, route family and path, status, duration, error code and,
 * for an activity, its id, type and organization. The path is logged without its query (the dev
 * outbox's carries a contact). While the service drains, answers close their connection so clients
 * move to another instance.
 */
export function observeRequests(
  runtime: Runtime,
  logger: ServiceLogger | undefined,
): MiddlewareHandler<ObservedEnv> {
  return async (c, next) => {
    const started = performance.now()
    const given = c.req.header(REQUEST_ID_HEADER)
    const requestId = given !== undefined && WELL_FORMED_ID.test(given) ? given : runtime.newId()
    c.set('requestId', requestId)
    // Set before the handler answers, so they are part of the answer as it is made: a header added
    // to a finished answer makes Hono rebuild it as a web Response with a body stream, which
    // @hono/node-server then reads back (issue 42: 0.16–0.22 ms of CPU a request).
    c.header(REQUEST_ID_HEADER, requestId)
    if (runtime.lifecycle.draining) c.header('Connection', 'close')
    await next()
    // An answer made as a Response of its own (not through the context) has not got them yet.
    const { headers } = c.res
    if (headers.get(REQUEST_ID_HEADER) === null) c.header(REQUEST_ID_HEADER, requestId)
    if (runtime.lifecycle.draining && headers.get('connection') === null) c.header('Connection', 'close')
    const seconds = (performance.now() - started) / 1000
    const path = c.req.path
    const family = routeFamily(path)
    const method = METHODS.has(c.req.method) ? (c.req.method as HttpMethod) : 'OTHER'
    const status = c.res.status
    runtime.emit('http.request', { family, method, status, seconds })
    if (!logger) return
    // A probe's 503 is the answer it exists for (draining, database down), not a failure.
    const level = family === 'health' ? 'debug' : status >= 500 ? 'error' : 'info'
    if (logger.isLevelEnabled && !logger.isLevelEnabled(level)) return
    const activity = c.get('activity')
    const error = c.error instanceof ApiError ? c.error : undefined
    const cause = status === 503 ? unavailableCause(c.error) : undefined
    logger[level](
      {
        requestId,
        method,
        route: family,
        // Paths name routes, never secrets; a long one (a probe) is cut.
        path: path.length > 200 ? `${path.slice(0, 200)}…` : path,
        status,
        durationMs: Math.round(seconds * 1e4) / 10,
        ...(error ? { errorCode: error.errorCode } : {}),
        // A 503 from the database says why (its code and message), so an outage, a wedged
        // statement and a pool too small for the load can be told apart.
        ...(cause ? { cause } : {}),
        // A refused activity (a policy denial) is recorded: its id names it in the log.
        ...(typeof error?.extra.activityId === 'string' ? { activityId: error.extra.activityId } : {}),
        ...(activity ?? {}),
      },
      'request',
    )
  }
}
