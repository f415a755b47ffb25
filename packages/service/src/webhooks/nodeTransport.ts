// Node only (node:http, node:https, node:dns): exported from `@latchkey/service/node`, handed to
// `createService({ webhooks: { transport } })` by the CLI; nothing `createService` imports uses it.
import { lookup as dnsLookup, Resolver } from 'node:dns/promises'
import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import type { WebhookRequest, WebhookResponse, WebhookTransport } from './WebhooksOptions.ts'
import { WebhookRefusedError } from './WebhooksOptions.ts'

/**
 * Resolves a host name to its addresses. `signal` ends when the try does (a lookup still under way
 * is then cancelled); `timeoutMs` is the longest the try's connection may wait for it.
 */
export type WebhookResolver = (
  hostname: string,
  context?: { signal?: AbortSignal; timeoutMs?: number },
) => Promise<{ address: string; family: 4 | 6 }[]>

/**
 * The system resolver (`dns.lookup`: the hosts file, search domains, the name service switch). It
 * runs getaddrinfo on libuv's thread pool, where host-name lookups get at most half the threads (2
 * of Node's default 4), each held until DNS answers, whatever the try's timeout: only for the
 * operator's own receivers (`WebhookRequest.systemLookup`).
 */
const systemResolver: WebhookResolver = async (hostname, { signal } = {}) => {
  signal?.throwIfAborted()
  // getaddrinfo cannot be cancelled: a try that ends first stops waiting (its lookup slot is free).
  let gaveUp = () => {}
  const ended = new Promise<never>((_, reject) => {
    gaveUp = () => reject(signal?.reason)
    signal?.addEventListener('abort', gaveUp, { once: true })
  })
  try {
    const addresses = await Promise.race([dnsLookup(hostname, { all: true, verbatim: true }), ended])
    return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }))
  } finally {
    signal?.removeEventListener('abort', gaveUp)
  }
}

export interface NodeWebhookTransportOptions {
  /**
   * How every host is resolved (tests inject a stub).
   * @default DNS asked directly (`dnsResolver`), the system resolver for a `systemLookup` request
   */
  resolve?: WebhookResolver
  /**
   * DNS servers (`host` or `host:port`) asked for every host instead of the system's nameservers
   * (`systemLookup` requests too): A and AAAA questions (`dns.Resolver#setServers`).
   */
  dnsServers?: readonly string[]
  /**
   * Host lookups under way at once, at most; a try waits for a free one within its connect
   * timeout. `start` and `dev` build one transport per process. @default 4 (the senders of a
   * process, `WEBHOOK_SENDERS`)
   */
  maxLookups?: number
}

/** Longest a DNS question waits for its answer, whatever the try's connect timeout. */
const MAX_DNS_TIMEOUT_MS = 10_000

/** `localhost` and its subdomains are loopback (RFC 6761 §6.3), never asked of DNS. */
const LOOPBACK = [
  { address: '127.0.0.1', family: 4 as const },
  { address: '::1', family: 6 as const },
]
const isLocalhost = (hostname: string) => {
  const name = hostname.toLowerCase().replace(/\.$/, '')
  return name === 'localhost' || name.endsWith('.localhost')
}

const notFound = (hostname: string) =>
  Object.assign(new Error(`${hostname} not found`), { code: 'ENOTFOUND' })

/**
 * A resolver asking DNS for A and AAAA records directly (c-ares, on the event loop: no thread-pool
 * slot, so no other lookup of the process waits on it): `servers`, or the system's nameservers
 * (/etc/resolv.conf) read when each lookup starts. No hosts file, no search domain: a name is asked
 * as written (`localhost` names are loopback without a question). Each lookup has a channel of its
 * own, cancelled when its try ends; one question per server, each waiting at most the try's
 * connect timeout. A name that answers neither A nor AAAA is not found; one family failing (a
 * server's SERVFAIL) leaves the other's answers, all of which the transport still checks.
 */
export function dnsResolver(servers?: readonly string[]): WebhookResolver {
  const missing = (error: NodeJS.ErrnoException) =>
    error.code === 'ENODATA' || error.code === 'ENOTFOUND' ? [] : Promise.reject(error)
  return async (hostname, { signal, timeoutMs = 5000 } = {}) => {
    if (isLocalhost(hostname)) return LOOPBACK.map((entry) => ({ ...entry }))
    signal?.throwIfAborted()
    const resolver = new Resolver({
      timeout: Math.max(1, Math.min(Math.ceil(timeoutMs), MAX_DNS_TIMEOUT_MS)),
      tries: 1,
    })
    if (servers) resolver.setServers([...servers])
    const cancel = () => resolver.cancel()
    signal?.addEventListener('abort', cancel)
    try {
      const [v4, v6] = await Promise.allSettled([
        resolver.resolve4(hostname).catch(missing),
        resolver.resolve6(hostname).catch(missing),
      ])
      signal?.throwIfAborted()
      const addresses = [
        ...(v4.status === 'fulfilled' ? v4.value : []).map((address) => ({ address, family: 4 as const })),
        ...(v6.status === 'fulfilled' ? v6.value : []).map((address) => ({ address, family: 6 as const })),
      ]
      if (addresses.length > 0) return addresses
      const failed = [v4, v6].find((result) => result.status === 'rejected')
      throw failed ? failed.reason : notFound(hostname)
    } finally {
      signal?.removeEventListener('abort', cancel)
    }
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
 *
 * A host is asked of DNS directly (`dnsResolver`), not through the system resolver, unless the
 * request says it is the operator's (`systemLookup`): a tenant chooses the name, and so the DNS
 * server that answers it and how slowly. At most `maxLookups` lookups run at once; the wait for
 * one, and the lookup, count within the try's connect timeout, and a lookup still under way when
 * its try ends is cancelled. An IP literal is never looked up.
 */
export function nodeWebhookTransport(options: NodeWebhookTransportOptions = {}): WebhookTransport {
  const direct = options.resolve ?? dnsResolver(options.dnsServers)
  const system = options.resolve ?? (options.dnsServers ? direct : systemResolver)
  const slots = lookupSlots(Math.max(1, options.maxLookups ?? 4))
  // The receivers' agents, the one used last at the end (a tenant chooses the hosts). A connection
  // looked up by the system resolver (the operator's) is never reused for a host asked of DNS.
  const agents = new Map<string, http.Agent>()
  return async (request) => {
    const url = new URL(request.url)
    const key = `${request.systemLookup ? 'system ' : ''}${url.protocol}//${url.host}`
    let agent = agents.get(key)
    if (agent) agents.delete(key)
    else {
      agent = new (url.protocol === 'https:' ? https : http).Agent(AGENT)
      forgetIdle(agents, MAX_AGENTS - 1)
    }
    agents.set(key, agent)
    const lookup = { resolve: request.systemLookup ? system : direct, slots }
    try {
      return await send(request, url, { lookup, agent })
    } catch (error) {
      // A kept-alive connection the receiver closed just as it was reused: once more, on a new one.
      if (!(error instanceof ReusedSocketError)) throw error
      return send(request, url, { lookup, agent: false })
    }
  }
}

/** Counts the lookups under way; `take` waits for a free slot (in order) until `signal` ends. */
function lookupSlots(max: number) {
  let running = 0
  const waiting: (() => void)[] = []
  const release = () => {
    const next = waiting.shift()
    if (next) next()
    else running--
  }
  return {
    take(signal: AbortSignal): Promise<() => void> {
      signal.throwIfAborted()
      if (running < max) {
        running++
        return Promise.resolve(once(release))
      }
      return new Promise((resolve, reject) => {
        const granted = () => {
          signal.removeEventListener('abort', gaveUp)
          resolve(once(release))
        }
        const gaveUp = () => {
          const at = waiting.indexOf(granted)
          if (at >= 0) waiting.splice(at, 1)
          reject(signal.reason)
        }
        waiting.push(granted)
        signal.addEventListener('abort', gaveUp, { once: true })
      })
    },
  }
}

const once = (release: () => void) => {
  let released = false
  return () => {
    if (released) return
    released = true
    release()
  }
}

type Lookup = { resolve: WebhookResolver; slots: ReturnType<typeof lookupSlots> }

/**
 * Connections to a receiver are kept alive between tries (an endpoint's deliveries go one after
 * the other: a new TCP and TLS handshake each cost more than the delivery), each checked when it
 * connects, as every connection is. An idle one is closed after 4 s, before a receiver's own
 * keep-alive timeout (Node's is 5 s) can close it under a request. No cap on sockets a receiver:
 * the senders (4) bound the tries in flight, and a try the agent queued would be given a socket
 * made with the options of the try whose socket closed, its lookup bound to that finished try (and
 * so failing at once: a queued try recorded as a timeout, never sent).
 */
const AGENT: http.AgentOptions = {
  keepAlive: true,
  maxSockets: Number.POSITIVE_INFINITY,
  maxFreeSockets: 2,
  timeout: 4000,
}

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

function pinnedLookup(request: WebhookRequest, lookup: Lookup, signal: AbortSignal): LookupFunction {
  const resolve = async (hostname: string) => {
    const release = await lookup.slots.take(signal)
    try {
      return await lookup.resolve(hostname, { signal, timeoutMs: request.connectTimeoutMs })
    } finally {
      release()
    }
  }
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
  { lookup, agent }: { lookup: Lookup; agent: http.Agent | false },
): Promise<WebhookResponse> {
  const client = url.protocol === 'https:' ? https : http
  // Ends with the try: a lookup still under way (or waiting for its slot) is given up.
  const ended = new AbortController()
  return new Promise<WebhookResponse>((settle, fail) => {
    let done = false
    const finish = (error: Error | undefined, response?: WebhookResponse) => {
      if (done) return
      done = true
      ended.abort()
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
        lookup: pinnedLookup(request, lookup, ended.signal),
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
