// Delivery rows as an operator reads and keeps them: `latchkey_list_webhook_deliveries` reads
// keyset pages (by endpoint and listKey, never an endpoint's whole history) and refuses a cursor
// that is not its own; the retention job deletes settled rows past the window or the per-endpoint
// cap, never one that still waits to be sent or retried, and a deleted endpoint's rows later.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { CreateServiceOptions } from '../assembly/createService.ts'
import { createHarness, type Harness, resultOf, testKey } from '../testing/harness.ts'
import { nodeWebhookTransport } from './nodeTransport.ts'

const servers: Server[] = []
const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))))
})

/** A loopback receiver answering `status()` (not verified here: webhooks.test.ts verifies). */
async function receiver(status: () => number): Promise<string> {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => response.writeHead(status()).end())
  })
  servers.push(server)
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
}

async function setUp(webhooks: CreateServiceOptions['webhooks'] = {}) {
  const h = await createHarness({
    webhooks: { transport: nodeWebhookTransport(), ...webhooks },
    jobs: { pollMs: 3_600_000, backoff: { baseMs: 1000, maxMs: 60_000 } },
  })
  harnesses.push(h)
  const flush = async () => {
    for (let round = 0; round < 50; round++) {
      await h.service.runtime.jobs.idle()
      if ((await h.service.runtime.jobs.runDue()) === 0) {
        await h.service.runtime.jobs.idle()
        if ((await h.service.runtime.jobs.runDue()) === 0) return
      }
    }
  }
  const endpoint = async (url: string, as?: { organizationId: string; as: ReturnType<typeof testKey> }) => {
    h.clock.advance(1)
    return resultOf(
      'create_webhook_endpoint',
      await h.submit(
        'create_webhook_endpoint',
        { url, name: 'app', subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }] },
        as,
      ),
    ).endpointId
  }
  const wallets = async (count: number, as?: { organizationId: string; as: ReturnType<typeof testKey> }) => {
    for (let i = 0; i < count; i++) {
      h.clock.advance(1)
      resultOf('create_wallet', await h.submit('create_wallet', { walletName: `W${i}`, accounts: [] }, as))
    }
  }
  return { h, flush, endpoint, wallets }
}

type Listed = { deliveryId: string; endpointId: string; createdAtMs: string; state: string; sequence: number }
const ids = (rows: Listed[]) => rows.map((row) => row.deliveryId)

describe('latchkey_list_webhook_deliveries', () => {
  it('pages newest first by keyset, per endpoint or merged, never reading an endpoint’s whole history; a cursor not of this listing is a 400', async () => {
    const { h, flush, endpoint, wallets } = await setUp()
    const url = await receiver(() => 200)
    const first = await endpoint(url)
    const second = await endpoint(url)
    await wallets(7)
    await flush()
    const list = async (
      params: Record<string, unknown>,
      as?: { organizationId: string; as: ReturnType<typeof testKey> },
    ) => {
      const reply = await h.query('latchkey_list_webhook_deliveries', params, as)
      return reply
    }
    const all: Listed[] = (await list({ paginationOptions: { limit: '100' } })).body.webhookDeliveries
    expect(all).toHaveLength(14)
    expect(all.every((row) => row.state === 'delivered' && row.sequence > 0)).toBe(true)
    const times = all.map((row) => Number(row.createdAtMs))
    expect(times).toEqual([...times].sort((a, b) => b - a))
    // Reading page by page (3, then after the last id of each) gives the same rows, none twice.
    const findBy = h.service.store.findBy.bind(h.service.store)
    const wholeReads: string[] = []
    h.service.store.findBy = ((table: string, field: string, value: unknown) => {
      if (table === 'webhookDeliveries' && field === 'endpointId') wholeReads.push(String(value))
      return findBy(table as never, field as never, value)
    }) as typeof findBy
    const paged: Listed[] = []
    for (let after: string | undefined; ; ) {
      const page: Listed[] = (await list({ paginationOptions: { limit: '3', ...(after ? { after } : {}) } }))
        .body.webhookDeliveries
      paged.push(...page)
      if (page.length < 3) break
      after = page.at(-1)!.deliveryId
    }
    expect(ids(paged)).toEqual(ids(all))
    const one: Listed[] = []
    for (let after: string | undefined; ; ) {
      const page: Listed[] = (
        await list({ endpointId: second, paginationOptions: { limit: '2', ...(after ? { after } : {}) } })
      ).body.webhookDeliveries
      one.push(...page)
      if (page.length < 2) break
      after = page.at(-1)!.deliveryId
    }
    expect(ids(one)).toEqual(ids(all.filter((row) => row.endpointId === second)))
    expect(wholeReads).toEqual([])
    h.service.store.findBy = findBy
    // Another endpoint's delivery is not a cursor of this endpoint's listing.
    const across = await list({
      endpointId: first,
      paginationOptions: { after: all.find((row) => row.endpointId === second)!.deliveryId },
    })
    expect(across.status).toBe(400)
    expect(across.body.details).toMatchObject({ field: 'paginationOptions.after' })
    // Another organization's delivery is no cursor of this one's, either way round.
    const key = testKey()
    const sub = await h.createSubOrganization({ keys: [key] })
    const as = { organizationId: sub.organizationId, as: key }
    await endpoint(url, as)
    await wallets(1, as)
    await flush()
    const theirs: Listed[] = (await list({}, as)).body.webhookDeliveries
    expect(theirs).toHaveLength(1)
    for (const [after, caller] of [
      [theirs[0]!.deliveryId, undefined],
      [all[0]!.deliveryId, as],
      ['no-such-delivery', undefined],
    ] as const) {
      const refused = await list({ paginationOptions: { after } }, caller)
      expect(refused.status, after).toBe(400)
      expect(refused.body.details).toMatchObject({ field: 'paginationOptions.after' })
    }
  })
})

describe('events on the request path', () => {
  it('are one row per event in the activity’s transaction (no delivery, no job), fanned out per endpoint, numbered 1..N in order', async () => {
    const { h, flush, endpoint, wallets } = await setUp()
    const url = await receiver(() => 200)
    const endpoints = [await endpoint(url), await endpoint(url), await endpoint(url)]
    const jobsBefore = (await h.service.store.all('jobs')).length
    await wallets(4)
    const events = await h.service.store.all('webhookEvents')
    expect(events.map((row) => row.endpointIds)).toEqual(Array(4).fill(endpoints))
    expect(await h.service.store.all('webhookDeliveries')).toEqual([])
    expect((await h.service.store.all('jobs')).length).toBe(jobsBefore)
    await flush()
    expect(await h.service.store.all('webhookEvents')).toEqual([])
    const order = [...events].sort((a, b) => (a.listKey < b.listKey ? -1 : 1)).map((row) => row.id)
    for (const endpointId of endpoints) {
      const rows = (await h.service.store.findBy('webhookDeliveries', 'endpointId', endpointId)).sort(
        (a, b) => a.sequence - b.sequence,
      )
      expect(rows.map((row) => [row.eventId, row.sequence, row.state])).toEqual(
        order.map((eventId, i) => [eventId, i + 1, 'delivered']),
      )
      expect(rows.map((row) => JSON.parse(row.body).sequence)).toEqual([1, 2, 3, 4])
    }
  })
})

describe('delivery retention', () => {
  it('deletes settled rows past the per-endpoint cap and the window, never one still waiting, and a deleted endpoint’s after the window', async () => {
    const { h, flush, endpoint, wallets } = await setUp({
      retention: { maxAgeMs: 60_000, maxPerEndpoint: 3, intervalMs: 10_000 },
    })
    const healthy = await endpoint(await receiver(() => 200))
    const failing = await endpoint(await receiver(() => 500))
    // Another organization's endpoint, with rows inside the window: untouched throughout.
    const key = testKey()
    const sub = await h.createSubOrganization({ keys: [key] })
    const as = { organizationId: sub.organizationId, as: key }
    const theirs = await endpoint(await receiver(() => 200), as)
    // The parent's endpoints get the sub-organization's events too.
    await wallets(5)
    await wallets(1, as)
    await flush()
    const rows = (endpointId: string) => h.service.store.findBy('webhookDeliveries', 'endpointId', endpointId)
    const states = async (endpointId: string) => (await rows(endpointId)).map((row) => row.state)
    expect(await states(healthy)).toEqual(Array(6).fill('delivered'))
    expect(await states(failing)).toEqual(Array(6).fill('pending'))
    expect(await states(theirs)).toEqual(['delivered'])
    const newest = (await rows(healthy)).sort((a, b) => b.createdAt - a.createdAt).slice(0, 3)
    // The periodic prune was enqueued by the delivery worker: due at the next interval.
    h.clock.advance(10_000)
    await flush()
    // The cap: the 3 newest settled rows stay; the failing endpoint's 6 are still being retried;
    // the sub-organization's endpoint is under its cap.
    expect((await rows(healthy)).map((row) => row.id).sort()).toEqual(newest.map((row) => row.id).sort())
    expect(await states(failing)).toEqual(Array(6).fill('pending'))
    expect(await states(theirs)).toEqual(['delivered'])
    // Past the window: every settled row goes but a new one (inside it); waiting ones stay.
    h.clock.advance(60_000)
    await wallets(1, as)
    const recent = h.clock.now()
    h.clock.advance(10_000)
    await flush()
    for (const endpointId of [healthy, theirs])
      expect((await rows(endpointId)).map((row) => [row.state, row.createdAt])).toEqual([
        ['delivered', recent],
      ])
    expect(await states(failing)).toEqual(Array(7).fill('pending'))
    // A deleted endpoint's rows stay as a record for the window, then go, every one.
    h.clock.advance(1)
    resultOf('delete_webhook_endpoint', await h.submit('delete_webhook_endpoint', { endpointId: failing }))
    await flush()
    expect(await rows(failing)).toHaveLength(7)
    h.clock.advance(60_001)
    await flush()
    expect(await rows(failing)).toEqual([])
  })

  it('refuses a retention setting that is not a whole number above 0, naming it', async () => {
    await expect(
      createHarness({ webhooks: { retention: { maxPerEndpoint: 0 } } }).then((h) => harnesses.push(h)),
    ).rejects.toThrow('webhooks.retention.maxPerEndpoint must be a whole number above 0')
  })
})
