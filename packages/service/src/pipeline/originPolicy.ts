import type { Context, MiddlewareHandler } from 'hono'
import { ApiError } from '../errors.ts'
import type { Runtime } from '../Runtime.ts'
import { type CorsGrantOptions, corsGrant } from './corsGrant.ts'

/**
 * Which browser origins may read the service's answers, and which clients may use its dev routes.
 *
 * A page may read answers (CORS) when its origin is a loopback origin (`http://localhost:*`,
 * `http://127.0.0.1:*`, `http://[::1]:*`) or listed explicitly in some
 * enabled auth-proxy configuration's `allowedOrigins` (the CLI's `--allowed-origins` writes the dev
 * organization's). A `*` there opens the auth proxy (`/v1/*`) only, never `/public/*` or `/dev/*`.
 */

/** The socket address of the client, when the request came over the network (Node server). */
export function clientAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined
  const address = env?.incoming?.socket?.remoteAddress
  return typeof address === 'string' && address !== '' ? address : undefined
}

/** 127.0.0.0/8, ::1 and their IPv4-mapped IPv6 forms. */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.startsWith('::ffff:') ? address.slice(7) : address
  return bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare)
}

/** An http(s) origin on localhost, 127.0.0.0/8 or [::1]. */
export function isLoopbackOrigin(origin: string): boolean {
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) return false
  const host = url.hostname
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || isLoopbackAddress(host)
}

/** Origins listed explicitly (not `*`) by enabled auth-proxy configurations. */
export async function configuredOrigins(runtime: Runtime): Promise<Set<string>> {
  const origins = new Set<string>()
  for (const config of await runtime.store.all('proxyConfigs'))
    if (config.enabled)
      for (const origin of config.settings.allowedOrigins) if (origin !== '*') origins.add(origin)
  return origins
}

/**
 * True when a page at `origin` may read the service's answers. The request's own origin is not
 * trusted by itself: behind DNS rebinding a foreign name points at 127.0.0.1 and its pages are
 * "same origin" (same-origin pages need no CORS grant anyway; the dev IdP's own form posts from a
 * loopback origin).
 */
export async function originAllowed(runtime: Runtime, _c: Context, origin: string): Promise<boolean> {
  return isLoopbackOrigin(origin) || (await configuredOrigins(runtime)).has(origin)
}

const refuse = (message: string) => new ApiError('ORIGIN_NOT_ALLOWED', message)

/**
 * Guards a development surface (outbox, dev identity provider, operator settings): it answers
 * in-process and loopback clients only, and browsers only from allowed origins, which get a CORS
 * grant for exactly their origin (never `*`). Preflights of allowed origins are answered here.
 */
export function localOnly(runtime: Runtime, cors: CorsGrantOptions): MiddlewareHandler {
  const grant = corsGrant(cors)
  return async (c, next) => {
    const address = clientAddress(c)
    if (address !== undefined && !isLoopbackAddress(address))
      throw refuse(
        `development routes answer loopback clients only (this request came from ${address.slice(0, 60)})`,
      )
    const origin = c.req.header('origin')
    if (origin !== undefined) {
      if (!(await originAllowed(runtime, c, origin)))
        throw refuse(
          `origin ${origin.slice(0, 200)} may not use development routes; add it with --allowed-origins or the auth-proxy settings' allowedOrigins`,
        )
      grant(c, origin)
      if (c.req.method === 'OPTIONS') return c.body(null, 204)
    }
    await next()
  }
}
