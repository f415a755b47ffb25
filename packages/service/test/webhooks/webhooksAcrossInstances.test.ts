// Two service instances on one PostgreSQL database deliver to one real receiver: each event is
// sent by one instance (the endpoint's lease and the job's claim), in order, none lost, and so is
// an endpoint's backlog resumed on one while both send. The cap of 10 endpoints an organization
// holds when creates race on both.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { verifyWebhook, WEBHOOK_JWKS_PATH, type WebhookEventBody } from '@latchkey/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { watchSponsorBalances } from '../../src/sending/sponsorBalances.ts'
import { ETHEREUM_ACCOUNT, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'
import { twoInstances, usePostgres } from '../support/twoInstances.ts'
import { backlogOf } from './backlog.ts'

const postgres = usePostgres()
let server: Server
const received: WebhookEventBody[] = []
const rejected: string[] = []
let jwksFrom: Harness | undefined

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', async () => {
      const body = Buffer.concat(chunks)
      const jwks = await (await jwksFrom!.service.app.request(WEBHOOK_JWKS_PATH))
        .json()
        .catch(() => undefined)
      // A try that arrives after its service closed (at a test's end) is answered, not counted.
      if (!jwks?.keys) return void response.writeHead(503).end()
      const verdict = verifyWebhook({ body, headers: request.headers, jwks, now: jwksFrom!.clock.now() })
      if (verdict.ok) received.push(JSON.parse(body.toString('utf8')))
      else rejected.push(verdict.reason)
      response.writeHead(verdict.ok ? 200 : 401).end()
    })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
}, 600_000)

afterAll(async () => {
  await new Promise((done) => server?.close(done))
}, 60_000)

describe('webhooks across two instances on PostgreSQL', { timeout: 120_000 }, () => {
  it('sends each event once, in order, whichever instance recorded it', async () => {
    const [a, b] = await twoInstances(postgres.cluster, 'webhooks_two', {
      webhooks: { transport: nodeWebhookTransport() },
      jobs: { pollMs: 20, backoff: { baseMs: 20, maxMs: 100 } },
    })
    jwksFrom = a
    try {
      // Both publish the one signing key made by the first start.
      const keysOf = async (h: Harness) =>
        (await (await h.service.app.request(WEBHOOK_JWKS_PATH)).json()).keys
      expect(await keysOf(b)).toEqual(await keysOf(a))
      const port = (server.address() as AddressInfo).port
      resultOf(
        'create_webhook_endpoint',
        await a.submit('create_webhook_endpoint', {
          url: `http://127.0.0.1:${port}/hook`,
          name: 'app',
          subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
        }),
      )
      // B knows of the endpoint at once (no cache: the subscribers are read in each event's
      // transaction): its first wallet, right after A's commit, is an event too.
      const first = await b.submit('create_wallet', { walletName: 'W0', accounts: [] })
      const replies = [
        first,
        ...(await Promise.all(
          Array.from({ length: 11 }, (_, i) =>
            [a, b][i % 2]!.submit('create_wallet', { walletName: `W${i + 1}`, accounts: [] }),
          ),
        )),
      ]
      expect(replies.map((reply) => reply.status)).toEqual(Array(12).fill(200))
      const deadline = Date.now() + 60_000
      // The clock is injected: move it on so retried jobs (a later delivery waits for the head) fall due.
      while (received.length < 12 && Date.now() < deadline) {
        a.clock.advance(200)
        await new Promise((done) => setTimeout(done, 50))
      }
      // A little longer: a duplicate would show now.
      await new Promise((done) => setTimeout(done, 300))
      expect(rejected).toEqual([])
      expect(received.map((body) => body.sequence)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1))
      expect(new Set(received.map((body) => body.id)).size).toBe(12)
      const walletIds = replies.map((reply) => resultOf('create_wallet', reply).walletId).sort()
      expect(received.map((body) => (body.data as { walletId: string }).walletId).sort()).toEqual(walletIds)
    } finally {
      await a.service.close()
      await b.service.close()
    }
  })

  it('reports a sponsor going low once per crossing, however many instances look', async () => {
    const CHAIN = 'eip155:31337'
    const node = { wei: 10n ** 15n }
    const fetch = (async (_input: RequestInfo | URL, init?: RequestInit) => {
      const { id } = JSON.parse(String(init?.body)) as { id: number }
      return new Response(JSON.stringify({ jsonrpc: '2.0', id, result: `0x${node.wei.toString(16)}` }))
    }) as typeof globalThis.fetch
    const [a, b] = await twoInstances(postgres.cluster, 'webhooks_sponsor_low', {
      webhooks: { transport: nodeWebhookTransport() },
      jobs: { pollMs: 20, backoff: { baseMs: 20, maxMs: 100 } },
      fetch,
      rpc: { [CHAIN]: 'http://node.test' },
      sending: { worker: false },
      sponsorship: { delegates: { [CHAIN]: '0x00000000000000000000000000000000000000d1' } },
    })
    jwksFrom = a
    received.length = 0
    const watches = [a, b].map((h) =>
      watchSponsorBalances(h.service.runtime, {
        lowWei: 10n ** 16n,
        evmChains: [CHAIN],
        intervalMs: 3_600_000,
      }),
    )
    const lookEverywhere = () => Promise.all(watches.map((watch) => watch.refresh()))
    try {
      // Each instance's first look (started with its watch) has read the low balance and recorded
      // it before the endpoint exists: no subscriber, no event. Not waited for, a slow first look
      // (a loaded machine) recorded its crossing after the endpoint was made: a second event.
      await lookEverywhere()
      const port = (server.address() as AddressInfo).port
      resultOf(
        'create_webhook_endpoint',
        await a.submit('create_webhook_endpoint', {
          url: `http://127.0.0.1:${port}/hook`,
          name: 'app',
          subscriptions: [{ eventType: 'LATCHKEY_SPONSOR_BALANCE_LOW' }],
        }),
      )
      // Both look again at once: still the same crossing, no event.
      await lookEverywhere()
      await lookEverywhere()
      // Funded, then low again: one new crossing, seen by both instances at the same moment.
      node.wei = 10n ** 17n
      await lookEverywhere()
      node.wei = 10n ** 15n
      await lookEverywhere()
      await lookEverywhere()
      // A third instance's worth of looks (a restarted process has no memory of the state): none.
      const again = watchSponsorBalances(b.service.runtime, { lowWei: 10n ** 16n, evmChains: [CHAIN] })
      await again.refresh()
      again.stop()
      const deadline = Date.now() + 30_000
      while (received.length < 1 && Date.now() < deadline) {
        a.clock.advance(200)
        await new Promise((done) => setTimeout(done, 50))
      }
      await new Promise((done) => setTimeout(done, 500))
      expect(rejected).toEqual([])
      expect(received.map((body) => [body.type, body.organizationId, body.data])).toEqual([
        [
          'LATCHKEY_SPONSOR_BALANCE_LOW',
          a.organizationId,
          expect.objectContaining({ owner: 'default', caip2: CHAIN, balance: String(10n ** 15n) }),
        ],
      ])
      const rows = (await a.service.store.findBy('pluginRows', 'kind', 'sponsor-low')).map(
        (row) => row.data.low,
      )
      expect(rows).toEqual([true])
    } finally {
      for (const watch of watches) watch.stop()
      await a.service.close()
      await b.service.close()
    }
  })

  it('150 activities at once in a sub-organization whose parent has an ACTIVITY_UPDATES endpoint: none waits for another, each numbered once with no gap, in commit order, delivered in order', async () => {
    // The endpoint's sequence number is given after the commit, by the fan-out of either instance
    // (deliver.ts, fanOut), never in the activity's transaction: the activities only add a row
    // each, so neither process orders them and none fails another's commit.
    const [a, b] = (await twoInstances(postgres.cluster, 'webhooks_hot', {
      webhooks: { transport: nodeWebhookTransport() },
      jobs: { pollMs: 20, backoff: { baseMs: 20, maxMs: 100 } },
    })) as [Harness, Harness]
    jwksFrom = a
    try {
      const port = (server.address() as AddressInfo).port
      const { endpointId } = resultOf(
        'create_webhook_endpoint',
        await a.submit('create_webhook_endpoint', {
          url: `http://127.0.0.1:${port}/hot`,
          name: 'all activities',
          subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }],
        }),
      )
      const key = testKey()
      const sub = await a.createSubOrganization({
        keys: [key],
        wallet: { walletName: 'sub', accounts: [ETHEREUM_ACCOUNT] },
      })
      const as = { organizationId: sub.organizationId, as: key }
      // Each recorded as one event row, numbered into a delivery by whichever instance's fan-out
      // took it: once none waits, the deliveries are every event.
      const fannedOut = async () => {
        const deadline = Date.now() + 30_000
        while (
          (
            await a.service.store.pageBy('webhookEvents', {
              field: 'waiting',
              value: 'yes',
              by: 'listKey',
              limit: 1,
            })
          ).length > 0 &&
          Date.now() < deadline
        )
          await new Promise((done) => setTimeout(done, 20))
      }
      // The sub-organization's creation: its events so far.
      await fannedOut()
      const before = await a.service.store.count('webhookDeliveries', 'endpointId', endpointId)
      let payload = 0
      const sign = (h: Harness) =>
        h.submit(
          'sign_raw_payloads',
          {
            signWith: sub.addresses![0]!,
            payloads: [(++payload).toString(16).padStart(64, '0')],
            encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
            hashFunction: 'HASH_FUNCTION_NO_OP',
          },
          as,
        )
      // One after the other, alternating instances: each commits before the next begins.
      const inTurn: string[] = []
      for (let i = 0; i < 6; i++) {
        a.clock.advance(1)
        const reply = await sign([a, b][i % 2]!)
        expect(resultOf('sign_raw_payloads', reply).signatures).toHaveLength(1)
        inTurn.push(reply.body.activity.id)
      }
      const replies = await Promise.all(Array.from({ length: 150 }, (_, i) => sign([a, b][i % 2]!)))
      expect(replies.filter((reply) => reply.status !== 200).map((reply) => reply.body)).toEqual([])
      await fannedOut()
      const recorded = await a.service.store.count('webhookDeliveries', 'endpointId', endpointId)
      // The 6 in turn and the 150 at once (and nothing else).
      expect(recorded).toBe(before + 156)
      const mine = () => received.filter((body) => body.endpointId === endpointId)
      const deadline = Date.now() + 60_000
      while (mine().length < recorded && Date.now() < deadline) {
        a.clock.advance(200)
        await new Promise((done) => setTimeout(done, 50))
      }
      await new Promise((done) => setTimeout(done, 300))
      expect(rejected).toEqual([])
      // Each number once, none missing, and sent in that order (one sender per endpoint).
      expect(mine().map((body) => body.sequence)).toEqual(Array.from({ length: recorded }, (_, i) => i + 1))
      expect(new Set(mine().map((body) => body.id)).size).toBe(recorded)
      // What committed one after the other is numbered in that order, whichever instance recorded it.
      const sequenceOf = new Map(
        mine().map((body) => [(body.data as { activityId: string }).activityId, body.sequence]),
      )
      const turns = inTurn.map((id) => sequenceOf.get(id)!)
      expect(turns).toEqual([...turns].sort((x, y) => x - y))
      const signings = replies.map((reply) => sequenceOf.get(reply.body.activity.id)!)
      expect(Math.min(...signings)).toBeGreaterThan(Math.max(...turns))
    } finally {
      for (const h of [a, b]) await h.service.close()
    }
  })
  it('an endpoint off for three days with a backlog of three pages, resumed on one instance: both send, each once, in order, none expired', async () => {
    const [a, b] = await twoInstances(postgres.cluster, 'webhooks_resume', {
      webhooks: { transport: nodeWebhookTransport(), busyDelayMs: 0 },
      jobs: { pollMs: 20, backoff: { baseMs: 20, maxMs: 100 } },
    })
    jwksFrom = a
    const count = 450
    try {
      const port = (server.address() as AddressInfo).port
      const { endpointId } = resultOf(
        'create_webhook_endpoint',
        await a.submit('create_webhook_endpoint', {
          url: `http://127.0.0.1:${port}/hook/resume`,
          name: 'resumed',
          subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
        }),
      )
      expect((await a.submit('update_webhook_endpoint', { endpointId, isActive: false })).status).toBe(200)
      await backlogOf(a, { endpointId, count, state: 'pending' })
      a.clock.advance(3 * 24 * 60 * 60_000)
      expect((await b.submit('update_webhook_endpoint', { endpointId, isActive: true })).status).toBe(200)
      const mine = () => received.filter((body) => body.endpointId === endpointId)
      const deadline = Date.now() + 90_000
      while (mine().length < count && Date.now() < deadline) {
        a.clock.advance(200)
        await new Promise((done) => setTimeout(done, 50))
      }
      await new Promise((done) => setTimeout(done, 300))
      expect(rejected).toEqual([])
      expect(mine().map((body) => body.sequence)).toEqual(Array.from({ length: count }, (_, i) => i + 1))
      expect(await a.service.store.findBy('webhookDeliveries', 'waitingFor', endpointId)).toEqual([])
      expect(await a.service.store.get('jobs', `job.resume.${endpointId}`)).toBeUndefined()
    } finally {
      for (const h of [a, b]) await h.service.close()
    }
  })

  it('at most 10 endpoints an organization: with 8, 6 creates at once over both make exactly 2', async () => {
    const [a, b] = await twoInstances(postgres.cluster, 'webhooks_cap')
    try {
      const port = (server.address() as AddressInfo).port
      const endpoint = (n: number) => ({
        url: `http://127.0.0.1:${port}/hook/${n}`,
        name: `app ${n}`,
        subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
      })
      for (let n = 0; n < 8; n++)
        resultOf('create_webhook_endpoint', await a.submit('create_webhook_endpoint', endpoint(n)))
      const replies = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          [a, b][i % 2]!.submit('create_webhook_endpoint', endpoint(10 + i)),
        ),
      )
      expect(replies.filter((reply) => reply.status === 200)).toHaveLength(2)
      for (const reply of replies.filter((reply) => reply.status !== 200))
        expect([reply.status, reply.body.details?.field, reply.body.message]).toEqual([
          400,
          'parameters.url',
          expect.stringMatching(/10 webhook endpoints/),
        ])
      expect(await b.service.store.count('webhookEndpoints', 'organizationId', a.organizationId)).toBe(10)
    } finally {
      for (const h of [a, b]) await h.service.close()
    }
  })
})
