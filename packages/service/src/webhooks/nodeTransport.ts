// Node only (node:http, node:https, node:dns): exported from `@latchkey/service/node`, handed to
// `createService({ webhooks: { transport } })` by the CLI; nothing `createService` imports uses it.
import { lookup as dnsLookup, Resolver } from 'node:dns/promises'
import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import type { WebhookRequest, WebhookResponse, WebhookTransport } from './WebhooksOptions.ts'
import { WebhookRefusedError } from './WebhooksOptions.ts'

/** Resolves a host name to its addresses (the system resolver by default; tests inject a stub). */
export type WebhookResolver = (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>

const systemResolver: WebhookResolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({
    address,
    family: family === 6 ? 6 : 4,
  }))

export interface NodeWebhookTransportOptions {
  /** @default the system resolver (`dns.lookup`), or `dnsServers`' */
  resolve?: WebhookResolver
  /**
   * DNS servers (`host` or `host:port`) asked directly instead of the system resolver: A and AAAA
   * questions (`dns.Resolver#setServers`); a name that answers neither is not found.
   */
  dnsServers?: readonly string[]
}

/** A resolver asking `servers` for A and AAAA records (no hosts file, no system cache). */
export function dnsServerResolver(servers: readonly string[]): WebhookResolver {
  const resolver = new Resolver({ timeout: 2000, tries: 1 })
  resolver.setServers([...servers])
  const missing = (error: NodeJS.ErrnoException) =>
    error.code === 'ENODATA' || error.code === 'ENOTFOUND' ? [] : Promise.reject(error)
  return async (hostname) => {
    const [v4, v6] = await Promise.all([
      resolver.resolve4(hostname).catch(missing),
      resolver.resolve6(hostname).catch(missing),
    ])
    const addresses = [
      ...v4.map((address) => ({ address, family: 4 as const })),
      ...v6.map((address) => ({ address, family: 6 as const })),
    ]
    if (addresses.length === 0) throw Object.assign(new Error(`${hostname} not found`), { code: 'ENOTFOUND' })
    return addresses
  }
}

/**
 * Sends a webhook over node:http(s). The host is resolved once, here; every address it resolves
 * to must pass `request.refuse` (one refused address refuses the try: a name that mixes public
 * and private answers is not a receiver), and the socket connects to the checked address (the
 * `lookup` hands it to the socket, so nothing resolves the name again: DNS rebinding cannot swap
 * it). TLS still verifies the certificate against the name. No redirect is followed (a 3xx is the
 * receiver's answer, a failure). Connect and whole-request timeouts; the body is read up to
 * `maxResponseBytes`, then the connection is dropped.
 */
export function nodeWebhookTransport(options: NodeWebhookTransportOptions = {}): WebhookTransport {
  const resolve =
    options.resolve ?? (options.dnsServers ? dnsServerResolver(options.dnsServers) : systemResolver)
  // The receivers' agents, the one used last at the end (a tenant chooses the hosts).
  const agents = new Map<string, http.Agent>()
  return async (request) => {
    const url = new URL(request.url)
    const key = `${url.protocol}//${url.host}`
    let agent = agents.get(key)
    if (agent) agents.delete(key)
    else {
      agent = new (url.protocol === 'https:' ? https : http).Agent(AGENT)
      forgetIdle(agents, MAX_AGENTS - 1)
    }
    agents.set(key, agent)
    try {
      return await send(request, url, { resolve, agent })
    } catch (error) {
      // A kept-alive connection the receiver closed just as it was reused: once more, on a new one.
      if (!(error instanceof ReusedSocketError)) throw error
      return send(request, url, { resolve, agent: false })
    }
  }
}

/**
 * Connections to a receiver are kept alive between tries (an endpoint's deliveries go one after
 * the other: a new TCP and TLS handshake each cost more than the delivery), each checked when it
 * connects, as every connection is. An idle one is closed after 4 s, before a receiver's own
 * keep-alive timeout (Node's is 5 s) can close it under a request.
 */
const AGENT: http.AgentOptions = { keepAlive: true, maxSockets: 4, maxFreeSockets: 2, timeout: 4000 }

/**
 * Most receivers whose connections are kept alive (the senders of a process, 4, use at most 4 at
 * once): an endpoint whose URL a tenant keeps changing, or many endpoints, cannot make the process
 * hold a connection and an agent for every host name it ever sent to.
 */
const MAX_AGENTS = 64

/** Closes the agents used longest ago, down to `keep`, passing over those with a request under way. */
function forgetIdle(agents: Map<string, http.Agent>, keep: number): void {
  for (const [key, agent] of agents) {
    if (agents.size <= keep) return
    const busy = Object.values(agent.sockets).some((list) => (list?.length ?? 0) > 0)
    const queued = Object.values(agent.requests).some((list) => (list?.length ?? 0) > 0)
    if (busy || queued) continue
    agents.delete(key)
    agent.destroy()
  }
}

/** A reused kept-alive connection failed before any answer (`ECONNRESET`, `EPIPE`). */
class ReusedSocketError extends Error {}

function pinnedLookup(request: WebhookRequest, resolve: WebhookResolver): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (addresses) => {
        if (addresses.length === 0)
          return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '', 4)
        for (const { address } of addresses) {
          const refusal = request.refuse(address)
          if (refusal) return callback(new WebhookRefusedError(refusal), '', 4)
        }
        const chosen = addresses[0]!
        if ((lookupOptions as { all?: boolean }).all)
          return (callback as unknown as (error: null, all: { address: string; family: number }[]) => void)(
            null,
            [chosen],
          )
        callback(null, chosen.address, chosen.family)
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, '', 4),
    )
  }
}

function send(
  request: WebhookRequest,
  url: URL,
  { resolve, agent }: { resolve: WebhookResolver; agent: http.Agent | false },
): Promise<WebhookResponse> {
  const client = url.protocol === 'https:' ? https : http
  return new Promise<WebhookResponse>((settle, fail) => {
    let done = false
    const finish = (error: Error | undefined, response?: WebhookResponse) => {
      if (done) return
      done = true
      clearTimeout(total)
      request.signal.removeEventListener('abort', onAbort)
      if (error) {
        outgoing.destroy()
        fail(error)
      } else settle(response!)
    }
    const timeoutError = () => Object.assign(new Error('webhook timed out'), { name: 'TimeoutError' })
    const total = setTimeout(() => finish(timeoutError()), request.timeoutMs)
    const onAbort = () => finish(Object.assign(new Error('aborted'), { name: 'AbortError' }))
    request.signal.addEventListener('abort', onAbort)
    const outgoing = client.request(
      url,
      {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(request.body.length) },
        lookup: pinnedLookup(request, resolve),
        agent,
      },
      (incoming) => {
        const chunks: Buffer[] = []
        let size = 0
        incoming.on('data', (chunk: Buffer) => {
          const room = request.maxResponseBytes - size
          if (room > 0) chunks.push(chunk.subarray(0, room))
          size += chunk.length
          // Enough read: the rest is dropped with the connection.
          if (size >= request.maxResponseBytes) {
            finish(undefined, {
              status: incoming.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
            })
            incoming.destroy()
          }
        })
        incoming.on('end', () =>
          finish(undefined, {
            status: incoming.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        )
        incoming.on('error', (error) => finish(error))
      },
    )
    outgoing.on('socket', (socket) => {
      if (!socket.connecting) {
        // A kept-alive connection: it was checked when it connected; checked again all the same.
        const refusal = socket.remoteAddress ? request.refuse(socket.remoteAddress) : undefined
        if (refusal) finish(new WebhookRefusedError(refusal))
        return
      }
      const connect = setTimeout(() => finish(timeoutError()), request.connectTimeoutMs)
      const cleared = () => clearTimeout(connect)
      socket.once('connect', cleared)
      socket.once('secureConnect', cleared)
      socket.once('close', cleared)
    })
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      finish(
        outgoing.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')
          ? new ReusedSocketError(error.message)
          : error,
      ),
    )
    outgoing.end(request.body)
  })
}
