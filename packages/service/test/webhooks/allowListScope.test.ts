import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, resultOf } from '../../src/testing/harness.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'

/**
 * `[webhooks] allow_list` is the operator's list of its own internal receivers: it lets the
 * endpoints of top-level organizations (the operator's) reach them, never a sub-organization's
 * (an end user's, one per sign-up), which would otherwise have the service POST anywhere in that
 * range and read back what answered (`lastStatus`, `lastError`): a port scan of the operator's
 * network. 127.0.0.1/32 stands in for the documented ['10.20.0.0/16'] (loopback refused as in
 * production).
 */

const harnesses: Harness[] = []
const servers: Server[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  }
})

/** An internal service on the allow-listed range, recording what reaches it. */
async function internalService() {
  const hits: string[] = []
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      hits.push(request.url ?? '')
      response.writeHead(200).end('ok')
    })
  })
  servers.push(server)
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  return { hits, url: (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}` }
}

async function setUp() {
  const h = await createHarness({
    webhooks: { transport: nodeWebhookTransport(), allowLoopback: false, allowList: ['127.0.0.1/32'] },
    jobs: { pollMs: 3_600_000 },
  })
  harnesses.push(h)
  const sub = await h.createSubOrganization()
  return { h, sub, as: { as: sub.keys[0]!, organizationId: sub.organizationId } }
}

/** Runs the job queue until nothing is due (delivery tries, fan-outs). */
async function flush(h: Harness) {
  for (let round = 0; round < 20; round++) {
    await h.service.runtime.jobs.idle()
    if ((await h.service.runtime.jobs.runDue()) === 0) break
  }
  await h.service.runtime.jobs.idle()
}

const ACTIVITY_UPDATES = [{ eventType: 'ACTIVITY_UPDATES' }]

describe('[webhooks] allow_list reaches the operator’s own organizations only', () => {
  it('a sub-organization’s endpoint into the allowed range is refused at creation and at an update of its URL (400 naming parameters.url)', async () => {
    const { h, as } = await setUp()
    const internal = await internalService()
    const created = await h.submit(
      'create_webhook_endpoint',
      { url: internal.url('/internal/admin'), name: 'scan', subscriptions: ACTIVITY_UPDATES },
      as,
    )
    expect(created.status).toBe(400)
    expect(JSON.stringify(created.body)).toContain('parameters.url')
    // A public URL is fine; moving it into the range afterwards is not.
    const { endpointId } = resultOf(
      'create_webhook_endpoint',
      await h.submit(
        'create_webhook_endpoint',
        { url: 'https://receiver.example.com/hook', name: 'mine', subscriptions: ACTIVITY_UPDATES },
        as,
      ),
    )
    const updated = await h.submit(
      'update_webhook_endpoint',
      { endpointId, url: internal.url('/internal/admin') },
      as,
    )
    expect(updated.status).toBe(400)
    expect(JSON.stringify(updated.body)).toContain('parameters.url')
    const listed = await h.query('list_webhook_endpoints', { organizationId: as.organizationId }, as)
    expect(listed.body.webhookEndpoints.map((e: { url: string }) => e.url)).toEqual([
      'https://receiver.example.com/hook',
    ])
    expect(internal.hits).toEqual([])
  }, 60_000)

  it('a sub-organization’s endpoint stored into the range (as an older version allowed) is never sent there; its tries are refused', async () => {
    const { h, as } = await setUp()
    const internal = await internalService()
    const now = h.clock.now()
    await h.service.store.transaction(async (tx) => {
      await tx.put('webhookEndpoints', {
        id: 'older-endpoint',
        organizationId: as.organizationId,
        url: internal.url('/internal/admin'),
        name: 'older',
        isActive: true,
        subscriptions: [{ eventType: 'ACTIVITY_UPDATES', isActive: true }],
        sequence: 0,
        consecutiveFailures: 0,
        createdAt: now,
        updatedAt: now,
      })
    })
    resultOf('create_wallet', await h.submit('create_wallet', { walletName: 'w', accounts: [] }, as))
    await flush(h)
    h.clock.advance(60_000)
    await flush(h)
    expect(internal.hits).toEqual([])
    const listed = await h.query(
      'latchkey_list_webhook_deliveries',
      { organizationId: as.organizationId, endpointId: 'older-endpoint' },
      as,
    )
    const deliveries = listed.body.webhookDeliveries as {
      attempts: number
      lastError?: string
      lastStatus?: number
    }[]
    expect(deliveries.length).toBeGreaterThan(0)
    for (const delivery of deliveries) {
      expect(delivery.attempts).toBeGreaterThan(0)
      expect(delivery.lastError).toBe('refused')
      expect(delivery.lastStatus).toBeUndefined()
    }
  }, 60_000)

  it('control: a top-level organization’s endpoint into the range is created and delivered to', async () => {
    const { h } = await setUp()
    const internal = await internalService()
    const { endpointId } = resultOf(
      'create_webhook_endpoint',
      await h.submit('create_webhook_endpoint', {
        url: internal.url('/hook'),
        name: 'app',
        subscriptions: ACTIVITY_UPDATES,
      }),
    )
    resultOf('create_wallet', await h.submit('create_wallet', { walletName: 'w', accounts: [] }))
    await flush(h)
    expect(internal.hits.length).toBeGreaterThan(0)
    expect(new Set(internal.hits)).toEqual(new Set(['/hook']))
    const listed = await h.query('latchkey_list_webhook_deliveries', { endpointId })
    expect(listed.body.webhookDeliveries.map((d: { state: string }) => d.state)).toContain('delivered')
    // And moving it elsewhere in the range is allowed too.
    expect(
      (await h.submit('update_webhook_endpoint', { endpointId, url: internal.url('/other') })).status,
    ).toBe(200)
  }, 60_000)
})

describe('loopback the operator allows (`allowLoopback: true`) reaches its own organizations only', () => {
  async function setUpLoopback() {
    const h = await createHarness({
      webhooks: { transport: nodeWebhookTransport(), allowLoopback: true },
      jobs: { pollMs: 3_600_000 },
    })
    harnesses.push(h)
    const sub = await h.createSubOrganization()
    return { h, as: { as: sub.keys[0]!, organizationId: sub.organizationId } }
  }

  it('a sub-organization’s loopback endpoint is refused at creation (400 naming parameters.url), and one stored earlier is never sent to', async () => {
    const { h, as } = await setUpLoopback()
    const internal = await internalService()
    for (const url of [internal.url('/admin'), 'http://localhost:1/admin']) {
      const created = await h.submit(
        'create_webhook_endpoint',
        { url, name: 'scan', subscriptions: ACTIVITY_UPDATES },
        as,
      )
      expect(created.status).toBe(400)
      expect(JSON.stringify(created.body)).toContain('parameters.url')
    }
    const now = h.clock.now()
    await h.service.store.transaction(async (tx) => {
      await tx.put('webhookEndpoints', {
        id: 'older-loopback',
        organizationId: as.organizationId,
        url: internal.url('/admin'),
        name: 'older',
        isActive: true,
        subscriptions: [{ eventType: 'ACTIVITY_UPDATES', isActive: true }],
        sequence: 0,
        consecutiveFailures: 0,
        createdAt: now,
        updatedAt: now,
      })
    })
    resultOf('create_wallet', await h.submit('create_wallet', { walletName: 'w', accounts: [] }, as))
    await flush(h)
    expect(internal.hits).toEqual([])
    const listed = await h.query(
      'latchkey_list_webhook_deliveries',
      { organizationId: as.organizationId, endpointId: 'older-loopback' },
      as,
    )
    const deliveries = listed.body.webhookDeliveries as { lastError?: string }[]
    expect(deliveries.length).toBeGreaterThan(0)
    for (const delivery of deliveries) expect(delivery.lastError).toBe('refused')
  }, 60_000)

  it('control: a top-level organization’s loopback endpoint is created and delivered to', async () => {
    const { h } = await setUpLoopback()
    const internal = await internalService()
    resultOf(
      'create_webhook_endpoint',
      await h.submit('create_webhook_endpoint', {
        url: internal.url('/hook'),
        name: 'app',
        subscriptions: ACTIVITY_UPDATES,
      }),
    )
    resultOf('create_wallet', await h.submit('create_wallet', { walletName: 'w', accounts: [] }))
    await flush(h)
    expect(new Set(internal.hits)).toEqual(new Set(['/hook']))
  }, 60_000)
})
