// A tenant chooses the URL: every way into the operator's network is tried here, with loopback
// servers only and a DNS stub on loopback UDP (test/support/dnsStub.ts) that the transport's
// resolver asks (`dnsServers`), or an injected resolver where only the policy is at stake.
// 127.0.0.2 stands for a public address (allow-listed), 127.0.0.1 for the operator's internal
// service the attacker wants to reach.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { type DnsStub, startDnsStub } from '../../test/support/dnsStub.ts'
import { createHarness, type Harness, resultOf } from '../testing/harness.ts'
import { type AddressPolicy, refuseAddress, refuseUrl } from './addressPolicy.ts'
import { nodeWebhookTransport, type WebhookResolver } from './nodeTransport.ts'
import { WebhookRefusedError, type WebhookRequest } from './WebhooksOptions.ts'

const servers: Server[] = []
const harnesses: Harness[] = []
const stubs: DnsStub[] = []
/** The DNS stub with these answers, and a transport whose resolver asks it (and nothing else). */
async function viaDns(answers: Record<string, string[][]>) {
  const stub = await startDnsStub(answers, { lifetimeMs: 20_000 })
  stubs.push(stub)
  return { stub, send: nodeWebhookTransport({ dnsServers: [stub.server] }) }
}
afterEach(async () => {
  await Promise.all(stubs.splice(0).map((stub) => stub.close()))
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
  const open = servers.splice(0)
  for (const server of open) server.closeAllConnections()
  await Promise.all(open.map((server) => new Promise((done) => server.close(done))))
})

/** A loopback server on `host` that counts its requests and answers with `handler`. */
async function serve(
  host: string,
  handler: (respond: import('node:http').ServerResponse) => void = (r) => r.writeHead(200).end('ok'),
) {
  const hits = { count: 0, port: 0 }
  const server = createServer((request, response) => {
    hits.count++
    request.resume()
    handler(response)
  })
  servers.push(server)
  await new Promise<void>((done) => server.listen(0, host, done))
  hits.port = (server.address() as AddressInfo).port
  return hits
}

const PRODUCTION_LIKE: AddressPolicy = { requireHttps: false, allowLoopback: false, allowList: ['127.0.0.2'] }

const request = (url: string, overrides: Partial<WebhookRequest> = {}): WebhookRequest => ({
  url,
  headers: { 'content-type': 'application/json' },
  body: new TextEncoder().encode('{}'),
  refuse: (address) => refuseAddress(address, PRODUCTION_LIKE),
  connectTimeoutMs: 1000,
  timeoutMs: 2000,
  maxResponseBytes: 4096,
  signal: new AbortController().signal,
  ...overrides,
})

/** A DNS stub: answers each name from its list, one answer per lookup, the last one repeated; counts lookups. */
function stubResolver(answers: Record<string, string[][]>): WebhookResolver & { lookups: string[] } {
  const lookups: string[] = []
  const resolve = async (hostname: string) => {
    lookups.push(hostname)
    const list = answers[hostname]
    if (!list) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' })
    const answer = list[Math.min(lookups.filter((name) => name === hostname).length - 1, list.length - 1)]!
    return answer.map((address) => ({ address, family: (address.includes(':') ? 6 : 4) as 4 | 6 }))
  }
  return Object.assign(resolve, { lookups })
}

describe('the address policy', () => {
  const production: AddressPolicy = { requireHttps: true, allowLoopback: false, allowList: [] }
  it.each([
    ['http://example.com/', 'scheme'],
    ['https://127.0.0.1/', 'loopback'],
    ['https://[::1]/', 'loopback'],
    ['https://169.254.169.254/latest/meta-data/', 'link_local'],
    ['https://10.0.0.1/', 'private'],
    ['https://192.168.1.1/', 'private'],
    ['https://172.16.0.1/', 'private'],
    ['https://100.64.0.1/', 'cgnat'],
    ['https://224.0.0.1/', 'multicast'],
    ['https://0.0.0.0/', 'unspecified'],
    ['https://[::ffff:127.0.0.1]/', 'loopback'],
    ['https://[::ffff:a9fe:a9fe]/', 'link_local'],
    ['https://[fd00::1]/', 'private'],
    ['https://[fe80::1]/', 'link_local'],
    ['https://[64:ff9b::a00:1]/', 'reserved'],
    // IPv4-compatible (the URL parser turns [::127.0.0.1] into [::7f00:1]) and site-local IPv6.
    ['https://[::127.0.0.1]/', 'reserved'],
    ['https://[::a9fe:a9fe]/', 'reserved'],
    ['https://[::808:808]/', 'reserved'],
    ['https://[fec0::1]/', 'reserved'],
    ['https://localhost/', 'localhost'],
    ['https://2130706433/', 'loopback'],
    ['https://0x7f.1/', 'loopback'],
  ])('refuses %s in production (%s)', (url, reason) => {
    expect(refuseUrl(url, production)).toBe(reason)
  })

  it('lets public addresses, allow-listed internal ones and, in dev, loopback through', () => {
    expect(refuseUrl('https://93.184.216.34/', production)).toBeUndefined()
    expect(refuseUrl('https://hooks.example.com/x', production)).toBeUndefined()
    expect(refuseUrl('https://10.1.2.3/', { ...production, allowList: ['10.1.2.0/24'] })).toBeUndefined()
    expect(refuseUrl('https://10.1.3.3/', { ...production, allowList: ['10.1.2.0/24'] })).toBe('private')
    expect(
      refuseUrl('http://127.0.0.1:8080/', { requireHttps: false, allowLoopback: true, allowList: [] }),
    ).toBeUndefined()
    expect(refuseUrl('http://10.0.0.1/', { requireHttps: false, allowLoopback: true, allowList: [] })).toBe(
      'private',
    )
  })
})

describe('endpoints are refused at creation', () => {
  it.each([
    'http://127.0.0.1/',
    'http://[::1]/',
    'http://169.254.169.254/',
    'http://10.0.0.1/',
    'http://[::ffff:127.0.0.1]/',
    'http://localhost:8080/',
  ])('%s → 400 naming parameters.url (dev without loopback)', async (url) => {
    const h = await createHarness({ webhooks: { allowLoopback: false } })
    harnesses.push(h)
    const reply = await h.submit('create_webhook_endpoint', { url, name: 'x', subscriptions: [] })
    expect(reply.status).toBe(400)
    expect(reply.body.details).toMatchObject({ field: 'parameters.url' })
    expect(reply.body.message).toMatch(/public address|localhost/)
  })
})

describe('the node transport, after DNS, on the address it connects to', () => {
  it('refuses a name that resolves to loopback (nothing reaches the internal server)', async () => {
    const internal = await serve('127.0.0.1')
    const { stub, send } = await viaDns({ 'evil.test': [['127.0.0.1']] })
    await expect(send(request(`http://evil.test:${internal.port}/`))).rejects.toBeInstanceOf(
      WebhookRefusedError,
    )
    expect(stub.queries).toContain('evil.test A')
    expect(internal.count).toBe(0)
    // A name the stub does not know is not found: a network failure, never a connection.
    await expect(send(request(`http://unknown.test:${internal.port}/`))).rejects.toMatchObject({
      code: 'ENOTFOUND',
    })
  })

  it('refuses a name with one private answer among public ones, and IPv4-mapped IPv6 answers', async () => {
    const internal = await serve('127.0.0.1')
    const resolve = stubResolver({
      'mixed.test': [['127.0.0.2', '10.0.0.1']],
      'mapped.test': [['::ffff:127.0.0.1']],
    })
    const send = nodeWebhookTransport({ resolve })
    await expect(send(request(`http://mixed.test:${internal.port}/`))).rejects.toMatchObject({
      reason: 'private',
    })
    await expect(send(request(`http://mapped.test:${internal.port}/`))).rejects.toMatchObject({
      reason: 'loopback',
    })
    expect(internal.count).toBe(0)
  })

  it('follows no redirect: a public receiver redirecting to loopback is its answer, nothing more', async () => {
    const internal = await serve('127.0.0.1')
    const redirecting = await serve('127.0.0.2', (response) =>
      response.writeHead(302, { location: `http://127.0.0.1:${internal.port}/admin` }).end(),
    )
    const send = nodeWebhookTransport({ resolve: stubResolver({ 'public.test': [['127.0.0.2']] }) })
    const answer = await send(request(`http://public.test:${redirecting.port}/`))
    expect(answer.status).toBe(302)
    expect(redirecting.count).toBe(1)
    expect(internal.count).toBe(0)
  })

  it('pins the checked address: a rebinding name (public, then private) is resolved once per connection and never reaches the private one', async () => {
    // The receiver closes each connection: every try connects, so resolves, again.
    const pub = await serve('127.0.0.2', (response) =>
      response.writeHead(200, { connection: 'close' }).end('ok'),
    )
    const internal = await serve('127.0.0.1')
    const { stub, send } = await viaDns({ 'rebind.test': [['127.0.0.2'], ['127.0.0.1']] })
    const lookups = () => stub.queries.filter((query) => query === 'rebind.test A')
    expect((await send(request(`http://rebind.test:${pub.port}/`))).status).toBe(200)
    expect(lookups()).toHaveLength(1)
    await expect(send(request(`http://rebind.test:${pub.port}/`))).rejects.toMatchObject({
      reason: 'loopback',
    })
    expect(lookups()).toHaveLength(2)
    expect(pub.count).toBe(1)
    expect(internal.count).toBe(0)
  })

  it('keeps a checked connection alive between tries: the next try reuses it (no new lookup) and reaches only the address it was checked at', async () => {
    const pub = await serve('127.0.0.2')
    const internal = await serve('127.0.0.1')
    const { stub, send } = await viaDns({ 'rebind.test': [['127.0.0.2'], ['127.0.0.1']] })
    const lookups = () => stub.queries.filter((query) => query === 'rebind.test A')
    for (let i = 0; i < 3; i++)
      expect((await send(request(`http://rebind.test:${pub.port}/`))).status).toBe(200)
    expect(lookups()).toHaveLength(1)
    expect(pub.count).toBe(3)
    expect(internal.count).toBe(0)
  })

  it('sends a try again on a new connection when the kept-alive one was closed by the receiver as it was reused', async () => {
    const pub = await serve('127.0.0.2')
    const send = nodeWebhookTransport({ resolve: stubResolver({ 'public.test': [['127.0.0.2']] }) })
    expect((await send(request(`http://public.test:${pub.port}/`))).status).toBe(200)
    // The receiver drops its idle connections (as a restart or its keep-alive timeout does).
    servers.at(-1)!.closeIdleConnections()
    expect((await send(request(`http://public.test:${pub.port}/`))).status).toBe(200)
    expect(pub.count).toBe(2)
  })

  it('times out a receiver that never answers, and reads at most maxResponseBytes', async () => {
    const silent = await serve('127.0.0.2', () => undefined)
    const send = nodeWebhookTransport({
      resolve: stubResolver({ 'slow.test': [['127.0.0.2']], 'big.test': [['127.0.0.2']] }),
    })
    const started = Date.now()
    await expect(send(request(`http://slow.test:${silent.port}/`, { timeoutMs: 300 }))).rejects.toMatchObject(
      {
        name: 'TimeoutError',
      },
    )
    expect(Date.now() - started).toBeLessThan(2000)
    const big = await serve('127.0.0.2', (response) => response.writeHead(200).end('x'.repeat(1_000_000)))
    const answer = await send(request(`http://big.test:${big.port}/`, { maxResponseBytes: 2048 }))
    expect(answer.body.length).toBeLessThanOrEqual(2048)
  })
})

describe('the node transport’s kept-alive connections', () => {
  it('are held for a bounded number of receivers: an endpoint moved over 300 host names keeps at most 64 connections open, and the newest are reused', async () => {
    const pub = await serve('127.0.0.2')
    const server = servers.at(-1)!
    const names = Array.from({ length: 300 }, (_, i) => `r${i}.public.test`)
    const send = nodeWebhookTransport({
      resolve: stubResolver(Object.fromEntries(names.map((name) => [name, [['127.0.0.2']]]))),
    })
    // A tenant's endpoint, its URL changed between deliveries (each try within the connection's
    // keep-alive): one connection kept open for each name it ever used.
    for (const name of names) expect((await send(request(`http://${name}:${pub.port}/`))).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const open = await new Promise<number>((done, fail) =>
      server.getConnections((error, count) => (error ? fail(error) : done(count))),
    )
    expect(open).toBeLessThanOrEqual(64)
    // The name used last still has its connection: another try opens none.
    let connections = 0
    server.on('connection', () => connections++)
    expect((await send(request(`http://${names.at(-1)}:${pub.port}/`))).status).toBe(200)
    expect(connections).toBe(0)
  })
})

describe('delivery through the service', () => {
  it('an endpoint whose name resolves to loopback at delivery gets nothing; the try is counted as refused', async () => {
    const internal = await serve('127.0.0.1')
    const { send } = await viaDns({ 'hooks.example.test': [['127.0.0.1']] })
    const outcomes: unknown[] = []
    const h = await createHarness({
      webhooks: { allowLoopback: false, transport: send },
      jobs: { pollMs: 3_600_000 },
      events: {
        emit: (name, data) => {
          if (name === 'webhooks.delivery') outcomes.push(data)
        },
      },
    })
    harnesses.push(h)
    const { endpointId } = resultOf(
      'create_webhook_endpoint',
      await h.submit('create_webhook_endpoint', {
        url: `http://hooks.example.test:${internal.port}/`,
        name: 'x',
        subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
      }),
    )
    h.clock.advance(1)
    await h.submit('create_wallet', { walletName: 'W', accounts: [] })
    await h.service.runtime.jobs.runDue()
    await h.service.runtime.jobs.idle()
    expect(internal.count).toBe(0)
    expect(outcomes).toEqual([{ outcome: 'refused', endpointId, eventType: 'LATCHKEY_WALLET_CREATED' }])
  })
})
