import type { Context, MiddlewareHandler } from 'hono'
import { type ApiError, PermissionError } from '../kernel/base/errors.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import { type CorsGrantOptions, corsGrant } from './corsGrant.ts'

const refuse = (message: string) => new PermissionError({ code: 'ORIGIN_NOT_ALLOWED', message })

/**
 * Which browser origins may read the service's answers, and which clients may use its dev routes.
 *
 * A page may read answers (CORS) when its origin is a loopback origin (`http://localhost:*`,
 * `http://127.0.0.1:*`, `http://[::1]:*`) or listed explicitly in some
 * enabled auth-proxy configuration's `allowedOrigins` (the CLI's `--allowed-origins` writes the dev
 * organization's). A `*` there opens the auth proxy (`/v1/*`) only, never `/public/*` or `/dev/*`.
 *
 * The Host a network request names is checked too: behind DNS rebinding a foreign name resolves to
 * 127.0.0.1, its pages are same-origin with the service (a same-origin GET carries no Origin at
 * all), and only the Host still tells them apart. A Host is allowed when it is a loopback name
 * (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`, any port) or the name of an origin listed
 * explicitly by an enabled configuration (any port).
 */

/**
 * What a trusted reverse proxy said about a request (`Forwarded`, `X-Forwarded-*`): the server
 * puts it in the request's env only when the socket peer is one of the configured proxies.
 */
export interface ForwardedInfo {
  /** The client's address as the proxy saw it. */
  client?: string
  /** `http` or `https`: the scheme the client used. */
  proto?: string
  /** The Host the client addressed. */
  host?: string
}

/**
 * The socket peer of a network request, read when the request arrived (`runServer` reads it as the
 * connection is taken, `capturePeer` before anything else runs): once a client has reset its
 * connection, `socket.remoteAddress` is undefined, so an address read later (after an await) is
 * lost. `address` is undefined when the socket had no peer to read even then.
 */
export interface PeerInfo {
  address: string | undefined
}

/** What a Node server passes with a request (`@hono/node-server`), and what the service adds to it. */
interface RequestEnv {
  incoming?: { socket?: { remoteAddress?: string } }
  peer?: PeerInfo
  forwarded?: ForwardedInfo
}

const envOf = (c: Context) => c.env as RequestEnv | undefined

/**
 * The socket peer of a request: undefined for an in-process call (no incoming socket at all:
 * `app.request()`, the auth proxy's forwarded calls, the service calling itself); for a network
 * request, the address captured when it arrived (`env.peer`), else the socket's now.
 */
export function socketPeer(env: unknown): PeerInfo | undefined {
  const found = env as RequestEnv | undefined
  if (found?.peer !== undefined) return found.peer
  if (found?.incoming === undefined) return undefined
  const address = found.incoming.socket?.remoteAddress
  return { address: typeof address === 'string' && address !== '' ? address : undefined }
}

/**
 * The env to serve a network request with, its socket peer read now (call it as the request
 * arrives, before any await): `env.peer` added, unless it is there already or the call is
 * in-process.
 */
export function capturePeer<Env>(env: Env): Env {
  const found = env as RequestEnv | undefined
  if (found?.incoming === undefined || found.peer !== undefined) return env
  return { ...found, peer: socketPeer(found) } as Env
}

/**
 * Whom a request came from: an in-process call (`network: false`), or a network client with its
 * address (the one a trusted proxy forwarded, else the socket peer's), undefined when unknown.
 */
export type RequestClient = { network: false } | { network: true; address: string | undefined }

export function requestClient(c: Context): RequestClient {
  const env = envOf(c)
  const forwarded = env?.forwarded?.client
  if (typeof forwarded === 'string' && forwarded !== '') return { network: true, address: forwarded }
  const peer = socketPeer(env)
  return peer === undefined ? { network: false } : { network: true, address: peer.address }
}

/**
 * The address of the client, for the budgets kept per address: undefined for an in-process call
 * (charged nothing). A network request whose address is unknown (its client reset the connection
 * before the service could read it) is refused, 403 `CLIENT_ADDRESS_UNKNOWN`: it is never taken for
 * an in-process one, and nothing is done for a client no budget can be charged to.
 */
export function clientAddress(c: Context): string | undefined {
  const client = requestClient(c)
  if (!client.network) return undefined
  if (client.address === undefined) throw unknownClient()
  return client.address
}

const unknownClient = () =>
  new PermissionError({
    code: 'CLIENT_ADDRESS_UNKNOWN',
    message:
      "the client's address is unknown (its connection closed before the service read it): nothing was done; send the request again",
  })

/** Headers by which a proxy says whom it forwards for. */
const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip']

/** The first proxy header a request carries, if any. */
export function proxyHeaderOf(c: Context): string | undefined {
  return PROXY_HEADERS.find((name) => c.req.header(name) !== undefined)
}

/** 127.0.0.0/8, ::1 and their IPv4-mapped IPv6 forms. */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.startsWith('::ffff:') ? address.slice(7) : address
  return bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare)
}

/** A URL's (normalised) hostname that names this machine: localhost, *.localhost, 127.0.0.0/8, [::1]. */
function isLoopbackHostname(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    hostname === '[::1]' ||
    isLoopbackAddress(hostname)
  )
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
  return isLoopbackHostname(url.hostname)
}

/** A Host header's name or address with an optional port, nothing else (no userinfo, no path). */
const HOST_SYNTAX = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i

/** The normalised hostname a Host header names (`127.1` → `127.0.0.1`), or undefined if malformed. */
function hostnameOf(host: string): string | undefined {
  const match = HOST_SYNTAX.exec(host)
  if (!match) return undefined
  try {
    return new URL(`http://${match[1]}`).hostname
  } catch {
    return undefined
  }
}

/** A Host header naming this machine, with any port. */
export function isLoopbackHost(host: string): boolean {
  const hostname = hostnameOf(host)
  return hostname !== undefined && isLoopbackHostname(hostname)
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
 * The Host a request was addressed to, when there is one to check: every request that came over
 * the network (its Host header, or the URL the server built from the HTTP/2 authority), and an
 * in-process request that sets a Host header. An in-process call without one (`app.request()`, the
 * browser client's in-page `fetch`, the auth proxy's forwarded calls) has no name a page could
 * have resolved: undefined.
 */
export function requestHost(c: Context): string | undefined {
  const forwarded = envOf(c)?.forwarded?.host
  if (forwarded !== undefined) return forwarded
  const header = c.req.header('host')
  if (header !== undefined) return header
  return requestClient(c).network ? new URL(c.req.url).host : undefined
}

/** True when `host` names this machine or an origin an enabled configuration lists. */
export async function hostAllowed(runtime: Runtime, host: string): Promise<boolean> {
  if (isLoopbackHost(host)) return true
  const hostname = hostnameOf(host)
  if (hostname === undefined) return false
  for (const origin of await configuredOrigins(runtime)) {
    try {
      if (new URL(origin).hostname === hostname) return true
    } catch {
      // a listed origin that does not parse names no host
    }
  }
  return false
}

/** The refusal of a request whose Host is neither a loopback name nor one a configuration lists. */
export function hostRefusal(host: string, what: string): ApiError {
  return refuse(
    `host ${host.slice(0, 200)} may not use ${what}: only loopback names (localhost, 127.0.0.1, [::1]) and the hosts of the auth-proxy settings' allowedOrigins are served (DNS rebinding)`,
  )
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

/**
 * Guards a development surface (outbox, dev identity provider, operator settings): it answers
 * in-process and loopback clients only (a network client whose address is unknown is refused, 403
 * `CLIENT_ADDRESS_UNKNOWN`), never through a proxy (a request carrying `Forwarded`,
 * `X-Forwarded-*` or `X-Real-IP`), addressed by an allowed Host (see `requestHost`), and
 * browsers only from allowed origins, which get a CORS grant for exactly their origin (never `*`).
 * Preflights of allowed origins are answered here.
 */
export function localOnly(runtime: Runtime, cors: CorsGrantOptions): MiddlewareHandler {
  const grant = corsGrant(cors)
  return async (c, next) => {
    // A proxy on this machine would make every client look local (its socket is loopback).
    const proxyHeader = proxyHeaderOf(c)
    if (proxyHeader !== undefined)
      throw refuse(
        `development routes do not answer through a proxy (this request carries ${proxyHeader}); run latchkey-service start behind a reverse proxy`,
      )
    // In-process calls pass; a network client whose address is unknown is refused.
    const address = clientAddress(c)
    if (address !== undefined && !isLoopbackAddress(address))
      throw refuse(
        `development routes answer loopback clients only (this request came from ${address.slice(0, 60)})`,
      )
    const host = requestHost(c)
    if (host !== undefined && !(await hostAllowed(runtime, host)))
      throw hostRefusal(host, 'development routes')
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
