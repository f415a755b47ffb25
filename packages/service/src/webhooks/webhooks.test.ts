import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  verifyWebhook,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_JWKS_PATH,
  type WebhookEventBody,
} from '@latchkey/protocol'
import { bytesToHex } from '@noble/hashes/utils.js'
import { base32nopad, base64urlnopad } from '@scure/base'
import { generateP256KeyPair, verifyTurnkeyWebhookSignature } from '@turnkey/crypto'
import { serializeTransaction } from 'viem'
import { afterEach, describe, expect, it } from 'vitest'
import type { CreateServiceOptions } from '../assembly/createService.ts'
import type { EventSink } from '../kernel/base/events.ts'
import { totp } from '../mfa/totp.ts'
import { createMetrics } from '../observability/metrics.ts'
import { watchSponsorBalances } from '../sending/sponsorBalances.ts'
import { sponsorAddress } from '../sending/sponsors.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  limitedSubOrganization,
  resultOf,
  type TestKey,
  testKey,
} from '../testing/harness.ts'
import { fanOut, turnJobIdOf } from './deliver.ts'
import { nodeWebhookTransport } from './nodeTransport.ts'
import { DELIVER_JOB, deliveryIdOf, jobIdOf } from './recordEvent.ts'
import { rotateSigningKey } from './signingKeys.ts'

/** A real node:http receiver that checks every request with the verifier against the service's JWKS. */
interface Receiver {
  url: string
  /** Bodies of the verified deliveries, in arrival order. */
  received: WebhookEventBody[]
  /** Requests that failed verification. */
  rejected: string[]
  /** The status the next requests get (a function of the request's index). */
  answer: (index: number) => number
  requests: number
  close(): Promise<void>
}

const servers: Server[] = []
const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))))
})

const readBody = (request: IncomingMessage) =>
  new Promise<Buffer>((done) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => done(Buffer.concat(chunks)))
  })

async function startReceiver(h: () => Harness): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    rejected: [],
    answer: () => 200,
    requests: 0,
    close: async () => undefined,
  }
  const server = createServer(async (request, response) => {
    const index = receiver.requests++
    const body = await readBody(request)
    const jwks = await (await h().service.app.request(WEBHOOK_JWKS_PATH)).json()
    const verdict = verifyWebhook({ body, headers: request.headers, jwks, now: h().clock.now() })
    if (!verdict.ok) {
      receiver.rejected.push(verdict.reason)
      response.writeHead(401).end()
      return
    }
    const status = receiver.answer(index)
    if (status < 300) receiver.received.push(JSON.parse(body.toString('utf8')))
    response.writeHead(status, { 'content-type': 'text/plain' }).end('x'.repeat(10_000))
  })
  servers.push(server)
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return receiver
}

const ALL = WEBHOOK_EVENT_TYPES.map((eventType) => ({ eventType }))

async function setUp(
  options: CreateServiceOptions['webhooks'] = {},
  service: Partial<CreateServiceOptions> = {},
) {
  let h!: Harness
  const receiver = await startReceiver(() => h)
  h = await createHarness({
    webhooks: { transport: nodeWebhookTransport(), ...options },
    jobs: { pollMs: 3_600_000, backoff: { baseMs: 1000, maxMs: 60_000 } },
    ...service,
  })
  harnesses.push(h)
  const endpoint = async (subscriptions: object[] = ALL, as?: { organizationId: string; as: TestKey }) =>
    resultOf(
      'create_webhook_endpoint',
      await h.submit('create_webhook_endpoint', { url: receiver.url, name: 'app', subscriptions }, as),
    )
  /** Runs every due delivery job until none is left due. */
  const flush = async () => {
    for (let round = 0; round < 50; round++) {
      await h.service.runtime.jobs.idle()
      if ((await h.service.runtime.jobs.runDue()) === 0) {
        await h.service.runtime.jobs.idle()
        if ((await h.service.runtime.jobs.runDue()) === 0) return
      }
    }
  }
  return { h, receiver, endpoint, flush }
}

const typesOf = (bodies: WebhookEventBody[]) => bodies.map((body) => body.type)

describe('webhook endpoints', () => {
  it('are created, listed, updated and deleted in the published shape, under policy', async () => {
    const { h, receiver } = await setUp()
    const created = resultOf(
      'create_webhook_endpoint',
      await h.submit('create_webhook_endpoint', {
        url: receiver.url,
        name: 'app',
        subscriptions: [
          { eventType: 'ACTIVITY_UPDATES', filtersJson: '{"activityTypes":["ACTIVITY_TYPE_CREATE_WALLET"]}' },
        ],
      }),
    )
    expect(created.webhookEndpoint).toEqual({
      endpointId: created.endpointId,
      organizationId: h.organizationId,
      url: receiver.url,
      name: 'app',
      isActive: true,
      subscriptions: [
        {
          eventType: 'ACTIVITY_UPDATES',
          filtersJson: '{"activityTypes":["ACTIVITY_TYPE_CREATE_WALLET"]}',
          isActive: true,
        },
      ],
    })
    expect((await h.query('list_webhook_endpoints', {})).body.webhookEndpoints).toEqual([
      created.webhookEndpoint,
    ])
    const updated = resultOf(
      'update_webhook_endpoint',
      await h.submit('update_webhook_endpoint', {
        endpointId: created.endpointId,
        name: 'renamed',
        isActive: false,
      }),
    )
    expect(updated.webhookEndpoint).toMatchObject({ name: 'renamed', isActive: false })
    expect(
      resultOf(
        'delete_webhook_endpoint',
        await h.submit('delete_webhook_endpoint', { endpointId: created.endpointId }),
      ),
    ).toEqual({ endpointId: created.endpointId })
    expect((await h.query('list_webhook_endpoints', {})).body.webhookEndpoints).toEqual([])
  })

  it.each([
    [{ url: 'ftp://example.com/x' }, 'parameters.url', 'https'],
    [{ url: 'not a url' }, 'parameters.url', 'absolute URL'],
    [{ url: 'https://user:pw@example.com/' }, 'parameters.url', 'password'],
    [
      { subscriptions: [{ eventType: 'BALANCE_ANYTHING' }] },
      'parameters.subscriptions[0].eventType',
      'one of',
    ],
    [
      { subscriptions: [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{' }] },
      'parameters.subscriptions[0].filtersJson',
      'JSON',
    ],
    [
      { subscriptions: [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{"x":[]}' }] },
      'parameters.subscriptions[0].filtersJson',
      'unknown filter',
    ],
  ])('refuse %j with a 400 naming %s', async (change, field, words) => {
    const { h } = await setUp()
    const reply = await h.submit('create_webhook_endpoint', {
      url: 'https://example.com/hook',
      name: 'x',
      ...change,
    })
    expect(reply.status).toBe(400)
    expect(reply.body.details).toMatchObject({ field })
    expect(reply.body.message).toContain(words)
  })

  it('are confined to their organization: a sub-organization can neither change nor redeliver its parent’s', async () => {
    const { h, endpoint, flush } = await setUp()
    const { endpointId } = await endpoint()
    const key = testKey()
    const sub = await h.createSubOrganization({ keys: [key] })
    const as = { organizationId: sub.organizationId, as: key }
    for (const [path, params] of [
      ['update_webhook_endpoint', { endpointId, url: 'https://attacker.example/' }],
      ['delete_webhook_endpoint', { endpointId }],
    ] as const) {
      const reply = await h.submit(path, params, as)
      expect(reply.status, path).toBe(400)
      expect(reply.body.details).toMatchObject({ field: 'parameters.endpointId' })
    }
    await flush()
    // The parent's endpoint got the sub-organization's sign-up; the sub-organization cannot replay it.
    const deliveries = await h.service.store.all('webhookDeliveries')
    const signUp = deliveries.find((row) => row.eventType === 'LATCHKEY_SIGN_UP')!
    const reply = await h.submit('latchkey_redeliver_webhook_event', { eventId: signUp.eventId }, as)
    expect(reply.status).toBe(400)
    expect(reply.body.details).toMatchObject({ field: 'parameters.eventId' })
  })

  it('their deliveries are listed, newest first and paginated, with the exact signed request, to their own organization only', async () => {
    const { h, receiver, endpoint, flush } = await setUp()
    const { endpointId } = await endpoint([{ eventType: 'LATCHKEY_WALLET_CREATED' }])
    const key = testKey()
    const sub = await h.createSubOrganization({ keys: [key] })
    const as = { organizationId: sub.organizationId, as: key }
    h.clock.advance(1)
    const own = resultOf(
      'create_webhook_endpoint',
      await h.submit(
        'create_webhook_endpoint',
        { url: receiver.url, name: 'sub', subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }] },
        as,
      ),
    ).endpointId
    h.clock.advance(1)
    await h.submit('create_wallet', { walletName: 'parent', accounts: [] })
    h.clock.advance(1)
    await h.submit('create_wallet', { walletName: 'sub', accounts: [] }, as)
    // Recorded, not tried yet: no request to show.
    const waiting = (await h.query('latchkey_list_webhook_deliveries', {})).body.webhookDeliveries
    expect(waiting.map((row: { state: string; request?: unknown }) => [row.state, row.request])).toEqual([
      ['pending', undefined],
      ['pending', undefined],
    ])
    await flush()
    const listed = (await h.query('latchkey_list_webhook_deliveries', {})).body.webhookDeliveries
    // The parent's endpoint got both wallets (the sub-organization's first: newest first).
    expect(
      listed.map((row: { organizationId: string; endpointId: string }) => [
        row.organizationId,
        row.endpointId,
      ]),
    ).toEqual([
      [sub.organizationId, endpointId],
      [h.organizationId, endpointId],
    ])
    const jwks = await (await h.service.app.request(WEBHOOK_JWKS_PATH)).json()
    for (const row of listed) {
      expect(row).toMatchObject({
        eventType: 'LATCHKEY_WALLET_CREATED',
        state: 'delivered',
        attempts: 1,
        lastStatus: 200,
      })
      expect(row.request).toMatchObject({ method: 'POST', url: receiver.url })
      // What the page shows is what was sent: the verifier accepts it as the receiver did.
      const verdict = verifyWebhook({
        body: new TextEncoder().encode(row.body),
        headers: row.request.headers,
        jwks,
        now: Number(row.request.sentAtMs),
      })
      expect(verdict.ok, JSON.stringify(verdict)).toBe(true)
      expect(receiver.received.map((body) => JSON.stringify(body))).toContain(row.body)
    }
    // Pages: one at a time, each after the last id of the one before.
    const first = await h.query('latchkey_list_webhook_deliveries', { paginationOptions: { limit: '1' } })
    const second = await h.query('latchkey_list_webhook_deliveries', {
      paginationOptions: { limit: '1', after: first.body.webhookDeliveries[0].deliveryId },
    })
    expect([...first.body.webhookDeliveries, ...second.body.webhookDeliveries]).toEqual(listed)
    // The sub-organization sees its own endpoint's delivery only, never its parent's.
    const subs = (await h.query('latchkey_list_webhook_deliveries', {}, as)).body.webhookDeliveries
    expect(subs.map((row: { endpointId: string }) => row.endpointId)).toEqual([own])
    const foreign = await h.query('latchkey_list_webhook_deliveries', { endpointId }, as)
    expect(foreign.status).toBe(400)
    expect(foreign.body.details).toMatchObject({ field: 'endpointId' })
    const byEvent = await h.query('latchkey_list_webhook_deliveries', { eventId: listed[0].eventId }, as)
    // The same event went to both endpoints: the sub-organization reads its own copy only.
    expect(byEvent.body.webhookDeliveries.map((row: { endpointId: string }) => row.endpointId)).toEqual([own])
    // Another sub-organization's credential cannot read the parent's.
    const otherKey = testKey()
    await h.createSubOrganization({ keys: [otherKey] })
    expect((await h.query('latchkey_list_webhook_deliveries', {}, { as: otherKey })).status).toBe(403)
  })

  it('are limited to 10 per organization', async () => {
    const { h, endpoint } = await setUp()
    for (let i = 0; i < 10; i++) {
      await endpoint([{ eventType: 'ACTIVITY_UPDATES' }])
      h.clock.advance(1)
    }
    expect((await h.query('list_webhook_endpoints', {})).body.webhookEndpoints).toHaveLength(10)
    const reply = await h.submit('create_webhook_endpoint', { url: 'https://example.com/', name: 'eleventh' })
    expect(reply.status).toBe(400)
    expect(reply.body.message).toContain('10 webhook endpoints')
  })
})

describe('events to a real receiver, each verified', () => {
  it('sign-up, wallet, an activity and a policy denial arrive once each, with unique ids and sequence numbers', async () => {
    const { h, receiver, endpoint, flush } = await setUp()
    const { endpointId } = await endpoint()
    const root = testKey()
    const sub = await h.createSubOrganization({
      keys: [root],
      wallet: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] },
    })
    h.clock.advance(1)
    const wallet = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] }),
    )
    // A user who is not root, with no policy: implicitly denied.
    const backend = testKey()
    const asRoot = { organizationId: sub.organizationId, as: root }
    await h.submit(
      'create_users',
      {
        users: [
          {
            userName: 'backend',
            apiKeys: [backend.apiKey('b')],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      },
      asRoot,
    )
    const denied = await h.submit(
      'create_wallet',
      { walletName: 'no', accounts: [] },
      { organizationId: sub.organizationId, as: backend },
    )
    expect(denied.status).toBe(403)
    // Nothing is sent on the request path.
    expect(receiver.requests).toBe(0)
    await flush()
    expect(receiver.rejected).toEqual([])
    const types = typesOf(receiver.received)
    expect(types.filter((type) => type === 'LATCHKEY_SIGN_UP')).toHaveLength(1)
    expect(types.filter((type) => type === 'LATCHKEY_WALLET_CREATED')).toHaveLength(2)
    expect(types.filter((type) => type === 'LATCHKEY_POLICY_DENIED')).toHaveLength(1)
    const signUp = receiver.received.find((body) => body.type === 'LATCHKEY_SIGN_UP')!
    expect(signUp).toMatchObject({
      version: 1,
      endpointId,
      organizationId: h.organizationId,
      data: { subOrganizationId: sub.organizationId },
    })
    const walletEvent = receiver.received.find(
      (body) => body.type === 'LATCHKEY_WALLET_CREATED' && body.organizationId === h.organizationId,
    )!
    expect(walletEvent.data).toEqual({ walletId: wallet.walletId, addresses: wallet.addresses })
    const completed = receiver.received.filter(
      (body) =>
        body.type === 'ACTIVITY_UPDATES' &&
        (body.data as { activityType: string }).activityType === 'ACTIVITY_TYPE_CREATE_WALLET',
    )
    expect(completed.map((body) => (body.data as { activityStatus: string }).activityStatus).sort()).toEqual([
      'ACTIVITY_STATUS_COMPLETED',
      'ACTIVITY_STATUS_FAILED',
    ])
    const denial = receiver.received.find((body) => body.type === 'LATCHKEY_POLICY_DENIED')!
    expect(denial).toMatchObject({
      organizationId: sub.organizationId,
      data: { outcome: 'OUTCOME_DENY_IMPLICIT' },
    })
    // Unique ids, sequence 1..n in order of arrival.
    expect(new Set(receiver.received.map((body) => body.id)).size).toBe(receiver.received.length)
    expect(receiver.received.map((body) => body.sequence)).toEqual(receiver.received.map((_, i) => i + 1))
    // No secret in any body.
    const all = JSON.stringify(receiver.received)
    for (const secret of [h.service.dev.apiPrivateKey, 'exportBundle', 'sealed'])
      expect(all).not.toContain(secret)
  })

  it('a replayed request makes no second event; a failed handler reports FAILED and nothing it would have made', async () => {
    const { h, receiver, endpoint, flush } = await setUp()
    await endpoint()
    const params = { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] }
    const timestampMs = String(h.clock.now())
    const first = await h.submit('create_wallet', params, { timestampMs })
    const replay = await h.submit('create_wallet', params, { timestampMs })
    expect(replay.body.activity.id).toBe(first.body.activity.id)
    h.clock.advance(1)
    const bad = await h.submit('export_wallet', { walletId: 'nope', targetPublicKey: '04'.padEnd(130, '1') })
    expect(bad.status).toBeGreaterThanOrEqual(400)
    await flush()
    const types = typesOf(receiver.received)
    expect(types.filter((type) => type === 'LATCHKEY_WALLET_CREATED')).toHaveLength(1)
    expect(types).not.toContain('LATCHKEY_EXPORT')
    // The endpoint's own creation, the wallet (once), the failed export.
    const updates = receiver.received
      .filter((body) => body.type === 'ACTIVITY_UPDATES')
      .map((body) => body.data)
    expect(updates).toMatchObject([
      { activityType: 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT', activityStatus: 'ACTIVITY_STATUS_COMPLETED' },
      { activityType: 'ACTIVITY_TYPE_CREATE_WALLET', activityStatus: 'ACTIVITY_STATUS_COMPLETED' },
      { activityType: 'ACTIVITY_TYPE_EXPORT_WALLET', activityStatus: 'ACTIVITY_STATUS_FAILED' },
    ])
  })

  it('a receiver that fails then recovers gets every event afterwards, in order (injected clock)', async () => {
    const { h, receiver, endpoint, flush } = await setUp()
    await endpoint([{ eventType: 'LATCHKEY_WALLET_CREATED' }])
    let down = true
    receiver.answer = () => (down ? 503 : 200)
    for (let i = 0; i < 6; i++) {
      await h.submit('create_wallet', { walletName: `W${i}`, accounts: [ETHEREUM_ACCOUNT] })
      h.clock.advance(1)
    }
    await flush()
    // Ten minutes down: the head is retried with backoff, the others wait behind it.
    for (let minute = 0; minute < 10; minute++) {
      h.clock.advance(60_000)
      await flush()
    }
    expect(receiver.received).toEqual([])
    const tries = receiver.requests
    expect(tries).toBeGreaterThan(1)
    expect(tries).toBeLessThan(20)
    down = false
    h.clock.advance(120_000)
    await flush()
    expect(receiver.received.map((body) => body.sequence)).toEqual([1, 2, 3, 4, 5, 6])
    expect(new Set(receiver.received.map((body) => body.id)).size).toBe(6)
  })

  it('an endpoint that keeps failing is paused (an event); resuming it sends what waited, and an event can be redelivered by id', async () => {
    const metrics = createMetrics()
    const paused: unknown[] = []
    const events = {
      emit: ((name, data) => {
        metrics.emit(name, data)
        if (name === 'webhooks.endpoint_paused') paused.push(data)
      }) as EventSink['emit'],
    }
    const { h, receiver, endpoint, flush } = await setUp({ pauseThreshold: 3 }, { events })
    const { endpointId } = await endpoint([{ eventType: 'LATCHKEY_WALLET_CREATED' }])
    receiver.answer = () => 500
    await h.submit('create_wallet', { walletName: 'A', accounts: [] })
    for (let i = 0; i < 6; i++) {
      await flush()
      h.clock.advance(120_000)
    }
    expect(receiver.requests).toBe(3)
    expect(paused).toEqual([{ endpointId, consecutiveFailures: 3 }])
    const rendered = await metrics.render()
    expect(rendered).toContain(
      'latchkey_webhook_deliveries_total{event_type="LATCHKEY_WALLET_CREATED",outcome="http_error"} 3',
    )
    expect(rendered).toContain('latchkey_webhook_endpoints_paused_total 1')
    // Bounded labels: no endpoint (a tenant's) is ever one.
    expect(rendered).not.toContain(endpointId)
    expect((await h.query('list_webhook_endpoints', {})).body.webhookEndpoints[0].pausedAtMs).toBeDefined()
    receiver.answer = () => 200
    await h.submit('update_webhook_endpoint', { endpointId, isActive: true })
    await flush()
    expect(receiver.received).toHaveLength(1)
    const [first] = receiver.received
    h.clock.advance(1)
    expect(
      resultOf(
        'latchkey_redeliver_webhook_event',
        await h.submit('latchkey_redeliver_webhook_event', { eventId: first!.id }),
      ),
    ).toEqual({ eventId: first!.id, endpointIds: [endpointId] })
    await flush()
    expect(receiver.received.map((body) => body.id)).toEqual([first!.id, first!.id])
  })

  it('a redelivery whose job finds another run holding the endpoint tries again, and is sent', async () => {
    const { h, receiver, endpoint, flush } = await setUp()
    const { endpointId } = await endpoint([{ eventType: 'LATCHKEY_WALLET_CREATED' }])
    await h.submit('create_wallet', { walletName: 'A', accounts: [] })
    await flush()
    expect(receiver.received).toHaveLength(1)
    const [first] = receiver.received
    // Another run holds the endpoint (a later event's job, sending): it leaves a head tried before
    // to that delivery's own job, so the redelivery's job must not end when it finds the lease held.
    const held = (await h.service.store.get('webhookEndpoints', endpointId))!
    await h.service.store.transaction((tx) =>
      tx.put('webhookEndpoints', { ...held, sendingBy: 'another/run', sendingUntil: h.clock.now() + 60_000 }),
    )
    h.clock.advance(1)
    await h.submit('latchkey_redeliver_webhook_event', { eventId: first!.id })
    await flush()
    expect(receiver.received).toHaveLength(1)
    // That run ends and gives the lease back without sending it (not its own, tried before).
    const holding = (await h.service.store.get('webhookEndpoints', endpointId))!
    const { sendingBy: _, sendingUntil: __, ...free } = holding
    await h.service.store.transaction((tx) => tx.put('webhookEndpoints', free))
    for (let i = 0; i < 4 && receiver.received.length < 2; i++) {
      h.clock.advance(60_000)
      await flush()
    }
    expect(receiver.received.map((body) => body.id)).toEqual([first!.id, first!.id])
  })

  it('an endpoint’s turn put back while another run still holds the endpoint tries again once it is free, and sends what waits', async () => {
    const { h, receiver, endpoint, flush } = await setUp()
    const { endpointId } = await endpoint([{ eventType: 'LATCHKEY_WALLET_CREATED' }])
    const store = h.service.store
    const holding = (await store.get('webhookEndpoints', endpointId))!
    // Another run sends this endpoint (another instance's): each new delivery's job finds it held
    // and leaves the queue to it.
    await store.transaction((tx) =>
      tx.put('webhookEndpoints', {
        ...holding,
        sendingBy: 'another/run',
        sendingUntil: h.clock.now() + 60_000,
      }),
    )
    for (let i = 0; i < 6; i++) {
      h.clock.advance(1)
      await h.submit('create_wallet', { walletName: `W${i}`, accounts: [] })
    }
    await flush()
    expect(receiver.requests).toBe(0)
    // Its turn over, that run puts the endpoint's turn back (`passTurn`), then gives the lease back.
    // The turn's job is claimed in between (by the other instance): it finds the lease held.
    const [first] = await store.pageBy('webhookDeliveries', {
      field: 'waitingFor',
      value: endpointId,
      by: 'queueKey',
      limit: 1,
    })
    await store.transaction((tx) =>
      h.service.runtime.jobs.enqueue(
        tx,
        DELIVER_JOB,
        { deliveryId: first!.id, endpointId },
        { id: turnJobIdOf(endpointId), runAfter: h.clock.now() },
      ),
    )
    await flush()
    const { sendingBy: _, sendingUntil: __, ...free } = (await store.get('webhookEndpoints', endpointId))!
    await store.transaction((tx) => tx.put('webhookEndpoints', free))
    for (let i = 0; i < 4 && receiver.received.length < 6; i++) {
      h.clock.advance(60_000)
      await flush()
    }
    expect(receiver.received.map((body) => body.sequence)).toEqual([1, 2, 3, 4, 5, 6])
  })

  it('a run that finds nothing to send looks again once it gives the endpoint back: a delivery whose job found it held meanwhile is sent', async () => {
    const { h, receiver, endpoint, flush } = await setUp()
    const { endpointId } = await endpoint([{ eventType: 'LATCHKEY_WALLET_CREATED' }])
    const { runtime } = h.service
    await h.submit('create_wallet', { walletName: 'A', accounts: [] })
    await flush()
    expect(receiver.received).toHaveLength(1)
    // A run holding the endpoint reads its queue and finds it empty (what it was for, sent by
    // another run meanwhile). Right after that read, an event commits, fanned out with the job of
    // its delivery, and that job runs: the endpoint is held, so it leaves the delivery to the holder.
    const pageBy = runtime.store.pageBy.bind(runtime.store)
    let armed = true
    runtime.store.pageBy = (async (table: string, query: { field: string; by: string; after?: string }) => {
      const rows = await pageBy(table as never, query as never)
      if (!armed || table !== 'webhookDeliveries' || query.by !== 'queueKey' || query.after !== undefined)
        return rows
      if (!(await runtime.store.get('webhookEndpoints', endpointId))?.sendingBy) return rows
      armed = false
      h.clock.advance(1)
      await h.submit('create_wallet', { walletName: 'B', accounts: [] })
      await fanOut(runtime, { deliver: true })
      const [waiting] = await pageBy('webhookDeliveries', {
        field: 'waitingFor',
        value: endpointId,
        by: 'queueKey',
        limit: 1,
      })
      await runtime.jobs.runDue()
      while (await runtime.store.get('jobs', jobIdOf(waiting!.id)))
        await new Promise((resolve) => setTimeout(resolve, 5))
      return rows
    }) as typeof runtime.store.pageBy
    // The holder: the endpoint's turn, put back for the delivery just sent (its run ended meanwhile).
    await runtime.store.transaction((tx) =>
      runtime.jobs.enqueue(
        tx,
        DELIVER_JOB,
        { deliveryId: deliveryIdOf(receiver.received[0]!.id, endpointId), endpointId },
        { id: turnJobIdOf(endpointId), runAfter: h.clock.now() },
      ),
    )
    await flush()
    expect(armed).toBe(false)
    expect(receiver.received.map((body) => body.sequence)).toEqual([1, 2])
  })

  // A run answers for more than its own delivery: the rest of its fan-out batch (no job of their
  // own) and what other jobs left to it while it held the endpoint. One transient store failure
  // (a PostgreSQL connection reset) after its own delivery went out fails the run: its retry,
  // which finds its own delivery sent, still looks at the queue.
  const failures = [
    {
      at: 'reading the next delivery',
      events: 3,
      later: 0,
      arm: (h: Harness, fail: () => boolean) => {
        const { store } = h.service.runtime
        const get = store.get.bind(store)
        store.get = (async (table: string, id: string) => {
          const row = (await get(table as never, id)) as { sequence?: number; state?: string } | undefined
          if (table === 'webhookDeliveries' && row?.sequence === 2 && row.state === 'pending' && fail())
            throw new Error('connection reset')
          return row
        }) as typeof store.get
      },
    },
    {
      at: 'putting the endpoint’s turn back',
      events: 6,
      later: 0,
      arm: (h: Harness, fail: () => boolean) => {
        const { jobs } = h.service.runtime
        const enqueue = jobs.enqueue.bind(jobs)
        jobs.enqueue = ((...args: Parameters<typeof enqueue>) => {
          if (args[3]?.id?.startsWith('job.turn.') && fail()) throw new Error('connection reset')
          return enqueue(...args)
        }) as typeof jobs.enqueue
      },
    },
    {
      // The lease, not given back, holds the endpoint: the next event's job finds it held and leaves
      // its delivery to the run that held it.
      at: 'giving the endpoint’s lease back',
      events: 1,
      later: 1,
      arm: (h: Harness, fail: () => boolean) => {
        const { store } = h.service.runtime
        const transaction = store.transaction.bind(store)
        store.transaction = ((fn, options) =>
          transaction(
            (tx) =>
              fn(
                new Proxy(tx, {
                  get(target, key) {
                    if (key !== 'put') return Reflect.get(target, key, target)
                    return async (table: string, row: { id: string; sendingBy?: string }) => {
                      if (
                        table === 'webhookEndpoints' &&
                        row.sendingBy === undefined &&
                        (await target.get('webhookEndpoints', row.id))?.sendingBy &&
                        fail()
                      )
                        throw new Error('connection reset')
                      return target.put(table as never, row as never)
                    }
                  },
                }),
              ),
            options,
          )) as typeof store.transaction
      },
    },
  ]
  for (const { at, events, later, arm } of failures)
    for (const fail of [true, false])
      it(`a run that ${fail ? 'fails' : 'does not fail'} after its delivery went out (${at}): the rest of the endpoint’s queue is sent, in order`, async () => {
        const { h, receiver, endpoint, flush } = await setUp()
        const { endpointId } = await endpoint([{ eventType: 'LATCHKEY_WALLET_CREATED' }])
        const submit = async (count: number) => {
          for (let i = 0; i < count; i++) {
            h.clock.advance(1)
            await h.submit('create_wallet', { walletName: `W${receiver.requests}.${i}`, accounts: [] })
          }
        }
        // One fan-out batch: one job, the head's, sends them all.
        await submit(events)
        let armed = fail
        arm(h, () => {
          if (!armed) return false
          armed = false
          return true
        })
        await flush()
        await submit(later)
        await flush()
        for (let i = 0; i < 6 && receiver.received.length < events + later; i++) {
          h.clock.advance(10 * 60_000)
          await flush()
        }
        expect(armed).toBe(false)
        expect(receiver.received.map((body) => body.sequence)).toEqual(
          Array.from({ length: events + later }, (_, i) => i + 1),
        )
        const waiting = await h.service.store.findBy('webhookDeliveries', 'waitingFor', endpointId)
        expect(waiting).toEqual([])
      })

  for (const turnOff of [true, false])
    it(`${turnOff ? 'an endpoint turned off while a run sends it gets nothing more until it is turned on, then the rest' : 'an endpoint left on while a run sends it gets every delivery'}, in sequence order`, async () => {
      const { h, receiver, endpoint, flush } = await setUp()
      const { endpointId } = await endpoint([{ eventType: 'LATCHKEY_WALLET_CREATED' }])
      const { runtime } = h.service
      const store = runtime.store
      // Three deliveries wait, left by their job to another run that held the endpoint.
      const holding = (await store.get('webhookEndpoints', endpointId))!
      await store.transaction((tx) =>
        tx.put('webhookEndpoints', {
          ...holding,
          sendingBy: 'another/run',
          sendingUntil: h.clock.now() + 60_000,
        }),
      )
      for (let i = 0; i < 3; i++) {
        h.clock.advance(1)
        await h.submit('create_wallet', { walletName: `W${i}`, accounts: [] })
      }
      await flush()
      const { sendingBy: _, sendingUntil: __, ...free } = (await store.get('webhookEndpoints', endpointId))!
      await store.transaction((tx) => tx.put('webhookEndpoints', free))
      const [head] = await store.pageBy('webhookDeliveries', {
        field: 'waitingFor',
        value: endpointId,
        by: 'queueKey',
        limit: 1,
      })
      // Right after the holder (the endpoint's turn) read its queue, the tenant turns the endpoint
      // off and the head's own job runs (claimed meanwhile).
      const pageBy = store.pageBy.bind(store)
      let armed = turnOff
      let offWhileHeld: number | undefined
      store.pageBy = (async (table: string, query: { by: string; after?: string }) => {
        const rows = await pageBy(table as never, query as never)
        if (!armed || table !== 'webhookDeliveries' || query.by !== 'queueKey' || query.after !== undefined)
          return rows
        if (!(await store.get('webhookEndpoints', endpointId))?.sendingBy) return rows
        armed = false
        offWhileHeld = (await h.submit('update_webhook_endpoint', { endpointId, isActive: false })).status
        await store.transaction((tx) =>
          runtime.jobs.enqueue(tx, DELIVER_JOB, { deliveryId: head!.id }, { id: jobIdOf(head!.id) }),
        )
        await runtime.jobs.runDue()
        for (let i = 0; i < 400 && (await store.get('jobs', jobIdOf(head!.id))); i++)
          await new Promise((resolve) => setTimeout(resolve, 5))
        return rows
      }) as typeof store.pageBy
      await store.transaction((tx) =>
        runtime.jobs.enqueue(
          tx,
          DELIVER_JOB,
          { deliveryId: head!.id, endpointId },
          { id: turnJobIdOf(endpointId), runAfter: h.clock.now() },
        ),
      )
      await flush()
      expect(armed).toBe(false)
      const sentWhileOff = receiver.received.map((body) => body.sequence)
      if (turnOff) {
        expect(offWhileHeld).toBe(200)
        // Nothing goes out once the endpoint is off: every one waits, listed paused.
        expect(sentWhileOff).toEqual([])
        const waiting = await store.findBy('webhookDeliveries', 'waitingFor', endpointId)
        expect(waiting).toHaveLength(3)
        const listed = await h.query('latchkey_list_webhook_deliveries', { endpointId })
        expect(listed.body.webhookDeliveries.map((row: { state: string }) => row.state)).toEqual([
          'paused',
          'paused',
          'paused',
        ])
        h.clock.advance(1)
        expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: true })).status).toBe(200)
      }
      for (let i = 0; i < 6 && receiver.received.length < 3; i++) {
        h.clock.advance(10 * 60_000)
        await flush()
      }
      expect(receiver.received.map((body) => body.sequence)).toEqual([1, 2, 3])
    })

  it('a busy service answers its requests first: an event waits to be fanned out and sent until the service is quiet or it is busyDelayMs old', async () => {
    const { h, receiver, endpoint, flush } = await setUp({ busyDelayMs: 5000 })
    const { endpointId } = await endpoint([{ eventType: 'LATCHKEY_WALLET_CREATED' }])
    const store = h.service.runtime.store
    const inFlight = store.requestsInFlight.bind(store)
    let busy = true
    store.requestsInFlight = () => (busy ? 200 : inFlight())
    await h.submit('create_wallet', { walletName: 'A', accounts: [] })
    h.clock.advance(4000)
    await flush()
    // Neither fanned out nor sent: no delivery row yet.
    expect(receiver.requests).toBe(0)
    expect(
      await h.service.store.pageBy('webhookDeliveries', {
        field: 'waitingFor',
        value: endpointId,
        by: 'queueKey',
        limit: 10,
      }),
    ).toEqual([])
    h.clock.advance(1000)
    await flush()
    expect(receiver.received.map((body) => body.type)).toEqual(['LATCHKEY_WALLET_CREATED'])
    // Quiet again (for a second: a load's short dips are not quiet): the next event goes at once.
    busy = false
    await new Promise((resolve) => setTimeout(resolve, 1000))
    await h.submit('create_wallet', { walletName: 'B', accounts: [] })
    await flush()
    expect(receiver.received).toHaveLength(2)
    // Fanned out while quiet, then busy before its try: its job waits (in real time, the clock
    // standing still) at most busyDelayMs, then sends it.
    const {
      h: h2,
      receiver: receiver2,
      endpoint: endpoint2,
      flush: flush2,
    } = await setUp({ busyDelayMs: 300 })
    await endpoint2([{ eventType: 'LATCHKEY_WALLET_CREATED' }])
    await h2.submit('create_wallet', { walletName: 'C', accounts: [] })
    await fanOut(h2.service.runtime, { deliver: true })
    h2.service.runtime.store.requestsInFlight = () => 200
    const started = Date.now()
    await flush2()
    expect(receiver2.received).toHaveLength(1)
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
  })

  it('LATCHKEY_ENDPOINT_PAUSED reaches the parent’s and a sibling’s healthy receivers, verified; resuming sends what waited', async () => {
    const metrics = createMetrics()
    const events = { emit: metrics.emit.bind(metrics) as EventSink['emit'] }
    const { h, receiver: parent, endpoint, flush } = await setUp({ pauseThreshold: 2 }, { events })
    await endpoint([{ eventType: 'LATCHKEY_ENDPOINT_PAUSED' }])
    const key = testKey()
    const sub = await h.createSubOrganization({ keys: [key] })
    const as = { organizationId: sub.organizationId, as: key }
    const failing = await startReceiver(() => h)
    const sibling = await startReceiver(() => h)
    failing.answer = () => 503
    const create = async (url: string, subscriptions: object[]) => {
      h.clock.advance(1)
      return resultOf(
        'create_webhook_endpoint',
        await h.submit('create_webhook_endpoint', { url, name: 'sub', subscriptions }, as),
      )
    }
    const { endpointId } = await create(failing.url, [
      { eventType: 'LATCHKEY_WALLET_CREATED' },
      { eventType: 'LATCHKEY_ENDPOINT_PAUSED' },
    ])
    await create(sibling.url, [{ eventType: 'LATCHKEY_ENDPOINT_PAUSED' }])
    h.clock.advance(1)
    await h.submit('create_wallet', { walletName: 'A', accounts: [] }, as)
    for (let i = 0; i < 5; i++) {
      await flush()
      h.clock.advance(120_000)
    }
    expect(failing.requests).toBe(2)
    expect(failing.received).toEqual([])
    // Both healthy receivers checked the signature (a rejection would be listed) and got the same event id.
    for (const receiver of [parent, sibling]) {
      expect(receiver.rejected).toEqual([])
      expect(receiver.received).toMatchObject([
        {
          type: 'LATCHKEY_ENDPOINT_PAUSED',
          organizationId: sub.organizationId,
          data: { endpointId, consecutiveFailures: 2 },
        },
      ])
    }
    expect(parent.received[0]!.id).toBe(sibling.received[0]!.id)
    expect(await metrics.render()).toContain('latchkey_webhook_endpoints_paused_total 1')
    const listed = (await h.query('list_webhook_endpoints', {}, as)).body.webhookEndpoints
    expect(listed.find((row: { endpointId: string }) => row.endpointId === endpointId).pausedAtMs).toBe(
      String(h.service.runtime.now() - 4 * 120_000),
    )
    // Resumed by an update: the wallet event and its own pause notice arrive, in order, verified.
    failing.answer = () => 200
    h.clock.advance(1)
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: true }, as)).status).toBe(200)
    await flush()
    expect(failing.rejected).toEqual([])
    expect(failing.received.map((body) => [body.type, body.sequence])).toEqual([
      ['LATCHKEY_WALLET_CREATED', 1],
      ['LATCHKEY_ENDPOINT_PAUSED', 2],
    ])
    expect(
      (await h.query('list_webhook_endpoints', {}, as)).body.webhookEndpoints.find(
        (row: { endpointId: string }) => row.endpointId === endpointId,
      ).pausedAtMs,
    ).toBeUndefined()
    // No second pause notice: the parent and the sibling heard of it once.
    expect(parent.received).toHaveLength(1)
    expect(sibling.received).toHaveLength(1)
  })
})

describe('sign-in and policy', () => {
  it('a login (stamp_login) in a sub-organization reaches the parent’s endpoint as LATCHKEY_LOGIN', async () => {
    const { h, receiver, endpoint, flush } = await setUp()
    await endpoint([{ eventType: 'LATCHKEY_LOGIN' }])
    const root = testKey()
    const sub = await h.createSubOrganization({ keys: [root] })
    const session = generateP256KeyPair()
    const login = await h.submit(
      'stamp_login',
      { publicKey: session.publicKey },
      { organizationId: sub.organizationId, as: root },
    )
    expect(login.status).toBe(200)
    await flush()
    expect(receiver.received).toMatchObject([
      {
        type: 'LATCHKEY_LOGIN',
        organizationId: sub.organizationId,
        data: { userId: sub.userIds[0], sessionType: 'SESSION_TYPE_READ_WRITE' },
      },
    ])
    expect(JSON.stringify(receiver.received)).not.toContain(resultOf('stamp_login', login).session)
  })

  it('endpoint activities are decided by policies: a non-root user needs one naming ORGANIZATION CREATE', async () => {
    const { h } = await setUp()
    const root = testKey()
    const sub = await h.createSubOrganization({ keys: [root] })
    const asRoot = { organizationId: sub.organizationId, as: root }
    const backend = testKey()
    const { userIds } = resultOf(
      'create_users',
      await h.submit(
        'create_users',
        {
          users: [
            {
              userName: 'backend',
              apiKeys: [backend.apiKey('b')],
              authenticators: [],
              oauthProviders: [],
              userTags: [],
            },
          ],
        },
        asRoot,
      ),
    )
    const create = () =>
      h.submit(
        'create_webhook_endpoint',
        { url: 'https://hooks.example.com/', name: 'app', subscriptions: [] },
        { organizationId: sub.organizationId, as: backend },
      )
    expect((await create()).body.details).toMatchObject({ outcome: 'OUTCOME_DENY_IMPLICIT' })
    await h.submit(
      'create_policy',
      {
        policyName: 'backend manages webhooks',
        effect: 'EFFECT_ALLOW',
        consensus: `approvers.any(user, user.id == '${userIds[0]}')`,
        condition: "activity.resource == 'ORGANIZATION' && activity.action == 'CREATE'",
        notes: '',
      },
      asRoot,
    )
    h.clock.advance(1)
    expect((await create()).status).toBe(200)
  })
})

describe('signatures', () => {
  it('are Turnkey’s: the published verifier accepts them with the JWKS key; a rotated key stays published', async () => {
    const { h, receiver, endpoint, flush } = await setUp()
    await endpoint([{ eventType: 'LATCHKEY_WALLET_CREATED' }])
    const captured: { headers: Record<string, string>; body: Buffer }[] = []
    const server = createServer(async (request, response) => {
      captured.push({ headers: request.headers as Record<string, string>, body: await readBody(request) })
      response.writeHead(204).end()
    })
    servers.push(server)
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
    await h.submit('create_webhook_endpoint', {
      url,
      name: 'raw',
      subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
    })
    h.clock.advance(1)
    await h.submit('create_wallet', { walletName: 'A', accounts: [] })
    await flush()
    expect(receiver.received).toHaveLength(1)
    const jwks = await (await h.service.app.request(WEBHOOK_JWKS_PATH)).json()
    expect(jwks.keys).toHaveLength(1)
    const [delivery] = captured
    const published = verifyTurnkeyWebhookSignature({
      headers: delivery!.headers,
      body: delivery!.body,
      verificationKeys: jwks.keys.map((key: { kid: string; x: string }) => ({
        keyId: key.kid,
        publicKey: bytesToHex(base64urlnopad.decode(key.x)),
        algorithm: 'ed25519' as const,
      })),
      maxTimestampAgeMs: 300_000,
      nowMs: h.clock.now(),
    })
    expect(published).toMatchObject({ ok: true, eventId: delivery!.headers['x-turnkey-event-id'] })
    // Tampering, a stale timestamp, an unknown key: refused by ours.
    const base = { headers: delivery!.headers, jwks, now: h.clock.now() }
    expect(
      verifyWebhook({ ...base, body: delivery!.body.toString().replace('"version":1', '"version":2') }),
    ).toMatchObject({
      ok: false,
      reason: 'invalid_signature',
    })
    expect(verifyWebhook({ ...base, body: `${delivery!.body} ` })).toMatchObject({
      ok: false,
      reason: 'invalid_signature',
    })
    expect(verifyWebhook({ ...base, body: delivery!.body, now: h.clock.now() + 600_000 })).toMatchObject({
      reason: 'stale_timestamp',
    })
    expect(verifyWebhook({ ...base, body: delivery!.body, jwks: { keys: [] } })).toMatchObject({
      reason: 'unknown_key',
    })
    const swapped = { ...delivery!.headers, 'x-turnkey-event-id': 'another' }
    expect(verifyWebhook({ ...base, headers: swapped, body: delivery!.body })).toMatchObject({ ok: false })
    // The type and organization headers are outside the signature: a receiver routing on them
    // is not fooled by a replay that swaps them.
    for (const [header, value] of [
      ['x-turnkey-event-type', 'LATCHKEY_SIGN_UP'],
      ['x-turnkey-organization-id', 'another organization'],
    ] as const)
      expect(
        verifyWebhook({ ...base, headers: { ...delivery!.headers, [header]: value }, body: delivery!.body }),
      ).toEqual({ ok: false, reason: 'header_mismatch', header })
    // A receiver that names its endpoint and organization takes only deliveries made for them:
    // one service key signs every tenant's, so another tenant's genuine delivery verifies otherwise.
    const sent = JSON.parse(delivery!.body.toString()) as { endpointId: string; organizationId: string }
    expect(
      verifyWebhook({
        ...base,
        body: delivery!.body,
        endpointId: sent.endpointId,
        organizationId: sent.organizationId,
      }),
    ).toMatchObject({ ok: true })
    expect(verifyWebhook({ ...base, body: delivery!.body, endpointId: 'another endpoint' })).toMatchObject({
      ok: false,
      reason: 'endpoint_mismatch',
    })
    expect(
      verifyWebhook({ ...base, body: delivery!.body, organizationId: 'another organization' }),
    ).toMatchObject({
      ok: false,
      reason: 'organization_mismatch',
    })
    // Rotation: the old key stays published beside the new one; new deliveries use the new one.
    const oldKid = jwks.keys[0].kid
    const newKid = await rotateSigningKey(h.service.runtime)
    const rotated = await (await h.service.app.request(WEBHOOK_JWKS_PATH)).json()
    expect(rotated.keys.map((key: { kid: string }) => key.kid)).toEqual([newKid, oldKid])
    h.clock.advance(1)
    await h.submit('create_wallet', { walletName: 'B', accounts: [] })
    await flush()
    expect(captured.at(-1)!.headers['x-turnkey-signature-key-id']).toBe(newKid)
    expect(receiver.rejected).toEqual([])
  })

  it('the signing key is sealed at rest', async () => {
    const { h } = await setUp()
    const rows = await h.service.store.findBy('pluginRows', 'kind', 'webhooks.signingKey')
    expect(rows).toHaveLength(1)
    const data = rows[0]!.data as Record<string, string>
    expect(Object.keys(data).sort()).toEqual(['publicKey', 'sealedPrivateKey'])
    expect(data.sealedPrivateKey).not.toMatch(/^[0-9a-f]{64}$/)
  })
})

describe('more event kinds, each recorded after its transaction commits', () => {
  it('a revoked session (deleted by a root user, or ended by a login with invalidateExisting) is LATCHKEY_SESSION_REVOKED', async () => {
    const { h, receiver, endpoint, flush } = await setUp()
    await endpoint([{ eventType: 'LATCHKEY_SESSION_REVOKED' }])
    const root = testKey()
    const sub = await h.createSubOrganization({ keys: [root] })
    const asRoot = { organizationId: sub.organizationId, as: root }
    /** Logs in with a new session key; resolves with that key's id. */
    const login = async (invalidateExisting?: boolean) => {
      h.clock.advance(1)
      const publicKey = generateP256KeyPair().publicKey
      const reply = await h.submit(
        'stamp_login',
        { publicKey, ...(invalidateExisting ? { invalidateExisting } : {}) },
        asRoot,
      )
      expect(reply.status).toBe(200)
      const keys = await h.service.store.findBy('apiKeys', 'userId', sub.userIds[0]!)
      return keys.find((row) => row.publicKey === publicKey)!.id
    }
    const first = await login()
    h.clock.advance(1)
    const timestampMs = String(h.clock.now())
    const revoke = () =>
      h.submit('delete_api_keys', { userId: sub.userIds[0], apiKeyIds: [first] }, { ...asRoot, timestampMs })
    const deleted = await revoke()
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200)
    // The same request again is a replay: no second event.
    expect((await revoke()).body.activity.id).toBe(deleted.body.activity.id)
    const second = await login()
    await login(true)
    await flush()
    expect(receiver.rejected).toEqual([])
    expect(receiver.received.map((body) => [body.organizationId, body.data])).toEqual([
      [
        sub.organizationId,
        { userId: sub.userIds[0], apiKeyId: first, reason: 'deleted', activityId: deleted.body.activity.id },
      ],
      [
        sub.organizationId,
        expect.objectContaining({ userId: sub.userIds[0], apiKeyId: second, reason: 'invalidate_existing' }),
      ],
    ])
    // Deleting a key that is gone fails: nothing rolled back is an event.
    h.clock.advance(1)
    expect(
      (await h.submit('delete_api_keys', { userId: sub.userIds[0], apiKeyIds: [first] }, asRoot)).status,
    ).toBe(404)
    await flush()
    expect(receiver.received).toHaveLength(2)
  })

  it('an activity completed later by consensus has its own ACTIVITY_UPDATES (CONSENSUS_NEEDED, then COMPLETED) and what it made', async () => {
    const { h, receiver, endpoint, flush } = await setUp()
    await endpoint([{ eventType: 'ACTIVITY_UPDATES' }, { eventType: 'LATCHKEY_WALLET_CREATED' }])
    const [a, b] = [testKey(), testKey()]
    const sub = await h.createSubOrganization({ keys: [a, b], threshold: 2 })
    h.clock.advance(1)
    const waiting = await h.submit(
      'create_wallet',
      { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] },
      { organizationId: sub.organizationId, as: a },
    )
    expect(waiting.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    h.clock.advance(1)
    const approved = await h.submit(
      'approve_activity',
      { fingerprint: waiting.body.activity.fingerprint },
      { organizationId: sub.organizationId, as: b },
    )
    expect(approved.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    await flush()
    expect(receiver.rejected).toEqual([])
    const ofWallet = receiver.received.filter(
      (body) => (body.data as { activityId?: string }).activityId === waiting.body.activity.id,
    )
    expect(ofWallet.map((body) => (body.data as { activityStatus: string }).activityStatus)).toEqual([
      'ACTIVITY_STATUS_CONSENSUS_NEEDED',
      'ACTIVITY_STATUS_COMPLETED',
    ])
    expect(new Set(ofWallet.map((body) => body.id)).size).toBe(2)
    const made = receiver.received.filter(
      (body) => body.type === 'LATCHKEY_WALLET_CREATED' && body.organizationId === sub.organizationId,
    )
    expect(made.map((body) => body.data)).toEqual([
      { walletId: approved.body.activity.result.createWalletResult.walletId, addresses: expect.any(Array) },
    ])
    // A second approval changes nothing and is no event about the wallet.
    h.clock.advance(1)
    await h.submit(
      'approve_activity',
      { fingerprint: waiting.body.activity.fingerprint },
      { organizationId: sub.organizationId, as: b },
    )
    await flush()
    expect(
      receiver.received.filter(
        (body) => (body.data as { activityId?: string }).activityId === waiting.body.activity.id,
      ),
    ).toHaveLength(2)
  })

  it('MFA satisfied is LATCHKEY_MFA_SATISFIED, then the held activity’s ACTIVITY_UPDATES COMPLETED', async () => {
    const { h, receiver, endpoint, flush } = await setUp()
    await endpoint([{ eventType: 'LATCHKEY_MFA_SATISFIED' }, { eventType: 'ACTIVITY_UPDATES' }])
    const key = testKey()
    const sub = await h.createSubOrganization({ keys: [key] })
    const userId = sub.userIds[0]!
    const as = { organizationId: sub.organizationId, as: key }
    const submit = (path: Parameters<Harness['submit']>[0], params: unknown) => {
      h.clock.advance(1)
      return h.submit(path, params, as)
    }
    const enrolled = resultOf(
      'latchkey_create_totp_factor',
      await submit('latchkey_create_totp_factor', { userId }),
    )
    const secret = base32nopad.decode(enrolled.secret)
    await submit('latchkey_confirm_totp_factor', {
      userId,
      factorId: enrolled.factorId,
      code: totp(secret, h.clock.now()),
    })
    h.clock.advance(30_000)
    const { mfaPolicyId } = resultOf(
      'create_mfa_policy',
      await submit('create_mfa_policy', {
        userId,
        mfaPolicyName: 'wallets need a code',
        condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
        requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
        order: 0,
      }),
    )
    const held = await submit('create_wallet', { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] })
    expect(held.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const code = totp(secret, h.clock.now())
    const done = await submit('latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: code,
    })
    expect(done.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    await flush()
    expect(receiver.rejected).toEqual([])
    const about = receiver.received.filter(
      (body) => (body.data as { activityId?: string }).activityId === held.body.activity.id,
    )
    expect(
      about.map((body) => [body.type, (body.data as { activityStatus?: string }).activityStatus]),
    ).toEqual([
      ['ACTIVITY_UPDATES', 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'],
      ['LATCHKEY_MFA_SATISFIED', undefined],
      ['ACTIVITY_UPDATES', 'ACTIVITY_STATUS_COMPLETED'],
    ])
    expect(about[1]!.data).toEqual({
      activityId: held.body.activity.id,
      activityType: 'ACTIVITY_TYPE_CREATE_WALLET',
      userId,
      policyIds: [mfaPolicyId],
    })
    // No code in any body.
    expect(JSON.stringify(receiver.received)).not.toContain(code)
  })

  it('a spending-limit refusal is LATCHKEY_SPENDING_LIMIT_REFUSED although the activity’s writes are rolled back; a replay is none', async () => {
    const { h, receiver, endpoint, flush } = await setUp()
    await endpoint([{ eventType: 'LATCHKEY_SPENDING_LIMIT_REFUSED' }])
    const { from: eth, spendingLimitId, userIds, ...as } = await limitedSubOrganization(h, { amount: '10' })
    // Paying no fee: the limit counts the value alone.
    const unsigned = (value: bigint, nonce: number) =>
      serializeTransaction({
        type: 'eip1559',
        chainId: 1,
        nonce,
        maxFeePerGas: 0n,
        maxPriorityFeePerGas: 0n,
        gas: 21_000n,
        to: '0x000000000000000000000000000000000000dead',
        value,
      })
    const sign = (value: bigint, nonce: number, timestampMs?: string) =>
      h.submit(
        'sign_transaction',
        { signWith: eth, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned(value, nonce) },
        { ...as, ...(timestampMs ? { timestampMs } : {}) },
      )
    h.clock.advance(1)
    expect((await sign(7n, 0)).status).toBe(200)
    h.clock.advance(1)
    const timestampMs = String(h.clock.now())
    const over = await sign(5n, 1, timestampMs)
    expect(over.status).toBe(429)
    expect((await sign(5n, 1, timestampMs)).status).toBe(429)
    await flush()
    expect(receiver.rejected).toEqual([])
    expect(receiver.received).toMatchObject([
      {
        type: 'LATCHKEY_SPENDING_LIMIT_REFUSED',
        organizationId: as.organizationId,
        data: {
          activityType: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
          userId: userIds[0],
          spendingLimitId,
          limit: '10',
          used: '7',
          requested: '5',
        },
      },
    ])
    // The refusal's usage write was rolled back: 3 more still fits.
    h.clock.advance(1)
    expect((await sign(3n, 2)).status).toBe(200)
  })

  it('a sponsor going below its threshold is LATCHKEY_SPONSOR_BALANCE_LOW to the top-level organization, once per crossing', async () => {
    const CHAIN = 'eip155:31337'
    const node = { wei: 10n ** 15n }
    const fetch = (async (_input: RequestInfo | URL, init?: RequestInit) => {
      const { id } = JSON.parse(String(init?.body)) as { id: number }
      return new Response(JSON.stringify({ jsonrpc: '2.0', id, result: `0x${node.wei.toString(16)}` }))
    }) as typeof globalThis.fetch
    const { h, receiver, endpoint, flush } = await setUp(
      {},
      {
        fetch,
        rpc: { [CHAIN]: 'http://node.test' },
        sending: { worker: false },
        sponsorship: { delegates: { [CHAIN]: '0x00000000000000000000000000000000000000d1' } },
      },
    )
    await endpoint([{ eventType: 'LATCHKEY_SPONSOR_BALANCE_LOW' }])
    // A sub-organization's own endpoint hears nothing of the operator's sponsor.
    const key = testKey()
    const sub = await h.createSubOrganization({ keys: [key] })
    h.clock.advance(1)
    await endpoint([{ eventType: 'LATCHKEY_SPONSOR_BALANCE_LOW' }], {
      organizationId: sub.organizationId,
      as: key,
    })
    const watch = watchSponsorBalances(h.service.runtime, { lowWei: 10n ** 16n, evmChains: [CHAIN] })
    try {
      await watch.refresh()
      await watch.refresh()
      node.wei = 10n ** 17n
      await watch.refresh()
      node.wei = 10n ** 15n
      await watch.refresh()
    } finally {
      watch.stop()
    }
    await flush()
    expect(receiver.rejected).toEqual([])
    const address = sponsorAddress(h.service.runtime, 'default', 'eip155')
    expect(receiver.received.map((body) => [body.organizationId, body.data])).toEqual([
      [
        h.organizationId,
        {
          owner: 'default',
          caip2: CHAIN,
          address,
          balance: String(10n ** 15n),
          threshold: String(10n ** 16n),
        },
      ],
      [
        h.organizationId,
        {
          owner: 'default',
          caip2: CHAIN,
          address,
          balance: String(10n ** 15n),
          threshold: String(10n ** 16n),
        },
      ],
    ])
    expect(new Set(receiver.received.map((body) => body.id)).size).toBe(2)
  })
})
