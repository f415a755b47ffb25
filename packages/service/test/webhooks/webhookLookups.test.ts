// How the node transport looks a webhook's host up (endUserDns.test.ts shows why, in a namespace of
// its own): an end user's host is asked of DNS directly (c-ares, no thread-pool slot), the lookup
// cancelled when its try ends, at most `maxLookups` of them at once (the wait counts against the
// try's connect timeout); the system resolver (hosts file, search domains) only for the operator's
// own endpoints (a top-level organization's, with an allow list or the operator's loopback).
import { createSocket, type Socket } from 'node:dgram'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, resultOf } from '../../src/testing/harness.ts'
import { refuseAddress } from '../../src/webhooks/addressPolicy.ts'
import { dnsResolver, nodeWebhookTransport, type WebhookResolver } from '../../src/webhooks/nodeTransport.ts'
import type { WebhookRequest, WebhookTransport } from '../../src/webhooks/WebhooksOptions.ts'
import { type DnsStub, startDnsStub } from '../support/dnsStub.ts'

const servers: Server[] = []
const sockets: Socket[] = []
const stubs: DnsStub[] = []
const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
  await Promise.all(stubs.splice(0).map((stub) => stub.close()))
  for (const socket of sockets.splice(0)) socket.close()
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  }
})

/** A receiver on 127.0.0.2 (a public address, allow-listed below) answering 200. */
async function receiver() {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => response.writeHead(200).end('ok'))
  })
  servers.push(server)
  await new Promise<void>((done) => server.listen(0, '127.0.0.2', done))
  return (server.address() as AddressInfo).port
}

/** A DNS server that never answers: every question it gets is counted. */
async function silentDns() {
  const socket = createSocket('udp4')
  sockets.push(socket)
  const asked = { count: 0 }
  socket.on('message', () => asked.count++)
  await new Promise<void>((done) => socket.bind(0, '127.0.0.1', done))
  return { server: `127.0.0.1:${(socket.address() as AddressInfo).port}`, asked }
}

const request = (url: string, overrides: Partial<WebhookRequest> = {}): WebhookRequest => ({
  url,
  headers: { 'content-type': 'application/json' },
  body: new TextEncoder().encode('{}'),
  refuse: (address) =>
    refuseAddress(address, { requireHttps: false, allowLoopback: false, allowList: ['127.0.0.2'] }),
  connectTimeoutMs: 300,
  timeoutMs: 2000,
  maxResponseBytes: 4096,
  signal: new AbortController().signal,
  ...overrides,
})

describe('DNS asked directly (an end user’s host)', () => {
  it('is cancelled when its try ends: a server that never answers holds the try only its connect timeout, asked once', async () => {
    const dns = await silentDns()
    const resolve = dnsResolver([dns.server])
    const ended = new AbortController()
    const started = Date.now()
    const lookup = resolve('never.test', { signal: ended.signal, timeoutMs: 5000 })
    setTimeout(() => ended.abort(), 100)
    await expect(lookup).rejects.toMatchObject({ name: 'AbortError' })
    expect(Date.now() - started).toBeLessThan(1000)
    // Through the transport: the try's connect timeout ends it.
    const send = nodeWebhookTransport({ dnsServers: [dns.server] })
    const before = dns.asked.count
    const sent = Date.now()
    await expect(send(request('http://never.test:9/'))).rejects.toMatchObject({ name: 'TimeoutError' })
    expect(Date.now() - sent).toBeLessThan(1000)
    await new Promise((resolve) => setTimeout(resolve, 500))
    // One A and one AAAA question, never asked again once the try ended.
    expect(dns.asked.count - before).toBe(2)
  })

  it('answers localhost names with loopback without asking, and resolves a name to all its A and AAAA answers', async () => {
    const stub = await startDnsStub({ 'both.test': [['127.0.0.2', '::1']] }, { lifetimeMs: 10_000 })
    stubs.push(stub)
    const resolve = dnsResolver([stub.server])
    expect(await resolve('localhost')).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ])
    expect(await resolve('api.LOCALHOST.')).toHaveLength(2)
    expect(stub.queries).toEqual([])
    expect(await resolve('both.test')).toEqual([
      { address: '127.0.0.2', family: 4 },
      { address: '::1', family: 6 },
    ])
    await expect(resolve('unknown.test')).rejects.toMatchObject({ code: 'ENOTFOUND' })
    // Every answer is checked: the loopback one refuses the try.
    const send = nodeWebhookTransport({ dnsServers: [stub.server] })
    await expect(send(request(`http://both.test:${await receiver()}/`))).rejects.toMatchObject({
      reason: 'loopback',
    })
  })
})

describe('lookups under way at once', () => {
  it('are at most maxLookups: a try waiting for one times out within its connect timeout, and each lookup is cancelled with its try', async () => {
    const port = await receiver()
    const signals: AbortSignal[] = []
    const asked: string[] = []
    let answer: (() => void) | undefined
    const answered = new Promise<void>((resolve) => (answer = resolve))
    // Slow names never answer until let go; a quick one answers at once.
    const resolve: WebhookResolver = async (hostname, context) => {
      asked.push(hostname)
      if (context?.signal) signals.push(context.signal)
      if (hostname.startsWith('slow')) await answered
      return [{ address: '127.0.0.2', family: 4 }]
    }
    const send = nodeWebhookTransport({ resolve, maxLookups: 2 })
    const started = Date.now()
    const tries = ['slow1', 'slow2', 'quick'].map((name) =>
      send(request(`http://${name}.test:${port}/`)).then(
        () => 'delivered',
        (error: Error) => error.name,
      ),
    )
    expect(await Promise.all(tries)).toEqual(['TimeoutError', 'TimeoutError', 'TimeoutError'])
    expect(Date.now() - started).toBeLessThan(1500)
    // The third never got a slot: it was never looked up.
    expect(asked).toEqual(['slow1.test', 'slow2.test'])
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true])
    // The slots came back with the tries: the next one is looked up and delivered.
    answer!()
    expect((await send(request(`http://quick.test:${port}/`))).status).toBe(200)
    expect(asked).toEqual(['slow1.test', 'slow2.test', 'quick.test'])
  })

  it('never includes an IP literal: it is not looked up', async () => {
    const port = await receiver()
    const asked: string[] = []
    const send = nodeWebhookTransport({
      resolve: async (hostname) => {
        asked.push(hostname)
        return [{ address: '127.0.0.2', family: 4 }]
      },
    })
    expect((await send(request(`http://127.0.0.2:${port}/`))).status).toBe(200)
    expect(asked).toEqual([])
  })
})

describe('the system resolver', () => {
  it("is never reused: an end user's try to the operator's host opens a connection of its own, looked up again", async () => {
    const port = await receiver()
    const asked: string[] = []
    const send = nodeWebhookTransport({
      resolve: async (hostname) => {
        asked.push(hostname)
        return [{ address: '127.0.0.2', family: 4 }]
      },
    })
    const url = `http://receiver.internal:${port}/`
    expect((await send(request(url, { systemLookup: true }))).status).toBe(200)
    expect((await send(request(url, { systemLookup: true }))).status).toBe(200)
    expect(asked).toHaveLength(1)
    expect((await send(request(url))).status).toBe(200)
    expect(asked).toHaveLength(2)
  })

  /** A service whose transport records each request's `systemLookup`, by URL. */
  async function recorded(webhooks: { allowList?: string[]; allowLoopback?: boolean }) {
    const seen = new Map<string, boolean | undefined>()
    const transport: WebhookTransport = async (sent) => {
      seen.set(sent.url, sent.systemLookup)
      return { status: 200, body: '' }
    }
    const h = await createHarness({ webhooks: { transport, ...webhooks }, jobs: { pollMs: 3_600_000 } })
    harnesses.push(h)
    const sub = await h.createSubOrganization()
    const as = { as: sub.keys[0]!, organizationId: sub.organizationId }
    const subscriptions = [{ eventType: 'ACTIVITY_UPDATES' }]
    resultOf(
      'create_webhook_endpoint',
      await h.submit('create_webhook_endpoint', { url: 'http://operator.test/', name: 'op', subscriptions }),
    )
    h.clock.advance(1)
    resultOf(
      'create_webhook_endpoint',
      await h.submit(
        'create_webhook_endpoint',
        { url: 'http://end-user.test/', name: 'eu', subscriptions },
        as,
      ),
    )
    h.clock.advance(1)
    await h.submit('create_wallet', { walletName: 'operator', accounts: [] })
    h.clock.advance(1)
    await h.submit('create_wallet', { walletName: 'end user', accounts: [] }, as)
    for (let round = 0; round < 20; round++) {
      await h.service.runtime.jobs.idle()
      if ((await h.service.runtime.jobs.runDue()) === 0) break
    }
    await h.service.runtime.jobs.idle()
    return Object.fromEntries(seen)
  }

  it("is the operator's endpoints' only (top-level, with an allow list or the operator's loopback), never an end user's", async () => {
    const system = { 'http://operator.test/': true, 'http://end-user.test/': false }
    expect(await recorded({ allowList: ['10.20.0.0/16'] })).toEqual(system)
    expect(await recorded({ allowLoopback: true })).toEqual(system)
    // Nothing internal allowed: every host is asked of DNS.
    expect(await recorded({})).toEqual({ 'http://operator.test/': false, 'http://end-user.test/': false })
  })
})
