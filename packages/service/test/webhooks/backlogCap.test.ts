// An endpoint paused by the service (its receiver failed) keeps getting every event it subscribes
// to, and its deliveries wait for a resume. A tenant (any sub-organization may register endpoints)
// could point one at a receiver that always fails and grow the operator's database for free: the
// backlog had no bound. At most `maxWaitingPerEndpoint` wait now; past it the oldest are dropped
// (listed `failed`, `backlog_full`), and a resume sends what was kept, in order, to a real
// receiver on loopback.
import type { WebhookDelivery } from '@latchkey/protocol'
import { afterEach, describe, expect, it } from 'vitest'
import type { ServiceEventMap } from '../../src/kernel/base/events.ts'
import { createHarness, type Harness, resultOf } from '../../src/testing/harness.ts'
import { BACKLOG_FULL } from '../../src/webhooks/capBacklog.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'
import { pruneEndpoint } from '../../src/webhooks/retention.ts'
import { backlogOf } from './backlog.ts'
import { setUp } from './inProcessReceiver.ts'
import { useLoopbackReceiver } from './loopbackReceiver.ts'

const CAP = 5

/** The receiver's answer to every request, and the bodies it took (a 2xx). */
const receiver = useLoopbackReceiver()

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
  receiver.status = 500
  receiver.received.length = 0
})

/** A service sending to the loopback receiver, `dropped` counting the `webhooks.delivery` events of drops. */
async function service() {
  const delivered: ServiceEventMap['webhooks.delivery'][] = []
  const h = await createHarness({
    webhooks: { transport: nodeWebhookTransport(), pauseThreshold: 1, maxWaitingPerEndpoint: CAP },
    jobs: { pollMs: 3_600_000, backoff: { baseMs: 1000, maxMs: 60_000 } },
    events: {
      emit: (name, data) => {
        if (name === 'webhooks.delivery') delivered.push(data as ServiceEventMap['webhooks.delivery'])
      },
    },
  })
  harnesses.push(h)
  const { jobs } = h.service.runtime
  const flush = async () => {
    for (let round = 0; round < 100; round++) {
      await jobs.idle()
      if ((await jobs.runDue()) === 0) {
        await jobs.idle()
        if ((await jobs.runDue()) === 0) return
      }
    }
  }
  const wallets = async (from: number, count: number) => {
    for (let i = from; i < from + count; i++) {
      h.clock.advance(1)
      const reply = await h.submit('create_wallet', { walletName: `W${i}`, accounts: [] })
      expect(reply.status).toBe(200)
    }
  }
  const listed = async (endpointId: string): Promise<WebhookDelivery[]> => {
    const reply = await h.query('latchkey_list_webhook_deliveries', {
      endpointId,
      paginationOptions: { limit: '100' },
    })
    expect(reply.status).toBe(200)
    return (reply.body as { webhookDeliveries: WebhookDelivery[] }).webhookDeliveries
  }
  const waiting = (endpointId: string) => h.service.store.count('webhookDeliveries', 'waitingFor', endpointId)
  const dropped = () => delivered.filter((event) => event.outcome === 'dropped').length
  return { h, flush, wallets, listed, waiting, dropped }
}

async function endpointOf(s: Awaited<ReturnType<typeof service>>): Promise<string> {
  const port = receiver.port
  const { endpointId } = resultOf(
    'create_webhook_endpoint',
    await s.h.submit('create_webhook_endpoint', {
      url: `http://127.0.0.1:${port}/hook`,
      name: 'app',
      subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
    }),
  ) as { endpointId: string }
  return endpointId
}

async function pausedEndpoint(s: Awaited<ReturnType<typeof service>>): Promise<string> {
  const endpointId = await endpointOf(s)
  // Its receiver fails the first try: paused (`pauseThreshold: 1`), it still gets every event.
  await s.wallets(0, 1)
  await s.flush()
  const [endpoint] = (
    (await s.h.query('list_webhook_endpoints', {})).body as { webhookEndpoints: { pausedAtMs?: string }[] }
  ).webhookEndpoints
  expect(endpoint?.pausedAtMs).toBeDefined()
  return endpointId
}

describe('the backlog of an endpoint that is off', () => {
  it('keeps the newest cap deliveries, lists the dropped ones, and a resume sends the kept in order', async () => {
    const s = await service()
    const endpointId = await pausedEndpoint(s)
    // Below the cap nothing is dropped: W0 (tried once) and W1..W3 wait.
    await s.wallets(1, 3)
    await s.flush()
    expect(await s.waiting(endpointId)).toBe(4)
    // cap + 8 events in all: the oldest 8 go (the 4 that waited, then the oldest 4 of this fan-out).
    await s.wallets(4, 9)
    await s.flush()
    expect(await s.waiting(endpointId)).toBe(CAP)
    expect(s.dropped()).toBe(8)
    const rows = (await s.listed(endpointId)).sort((a, b) => a.sequence - b.sequence)
    expect(rows.map((row) => [row.sequence, row.state, row.lastError ?? null])).toEqual([
      [1, 'failed', BACKLOG_FULL],
      ...Array.from({ length: 7 }, (_, i) => [i + 2, 'failed', BACKLOG_FULL]),
      ...Array.from({ length: CAP }, (_, i) => [i + 9, 'paused', null]),
    ])
    // W0 kept what its one try answered.
    expect(rows[0]).toMatchObject({ attempts: 1, lastStatus: 500 })
    // A redelivery would put one back past the cap: refused, naming the field.
    const refused = await s.h.submit('latchkey_redeliver_webhook_event', {
      eventId: rows[0]!.eventId,
      endpointId,
    })
    expect(refused.status).toBe(400)
    expect(JSON.stringify(refused.body)).toContain('parameters.endpointId')
    expect(await s.waiting(endpointId)).toBe(CAP)

    // Resumed, the receiver now answering: the kept ones go, in order, and nothing else.
    receiver.status = 200
    resultOf(
      'update_webhook_endpoint',
      await s.h.submit('update_webhook_endpoint', { endpointId, isActive: true }),
    )
    await s.flush()
    expect(receiver.received.map((body) => body.sequence)).toEqual([9, 10, 11, 12, 13])
    expect(receiver.received.map((body) => body.id)).toEqual(rows.slice(8).map((row) => row.eventId))
    expect(await s.waiting(endpointId)).toBe(0)
    // Drained, a dropped delivery can be asked for again, and goes (a new request: a later timestamp).
    s.h.clock.advance(1)
    resultOf(
      'latchkey_redeliver_webhook_event',
      await s.h.submit('latchkey_redeliver_webhook_event', { eventId: rows[0]!.eventId, endpointId }),
    )
    await s.flush()
    expect(receiver.received.map((body) => body.sequence)).toEqual([9, 10, 11, 12, 13, 1])
  })

  it('brings a backlog already over the cap (left by a version before it) down to it at the retention pass', async () => {
    const s = await service()
    const endpointId = await pausedEndpoint(s)
    // 12 waiting behind W0's delivery, as an unbounded version left them (sequence 1..12 taken over).
    const [first] = await s.listed(endpointId)
    await s.h.service.store.transaction((tx) => tx.delete('webhookDeliveries', first!.deliveryId))
    await backlogOf(s.h, { endpointId, count: 12, state: 'pending' })
    expect(await s.waiting(endpointId)).toBe(12)
    const outcome = await pruneEndpoint(s.h.service.runtime, {
      endpointId,
      cutoff: 0,
      keep: 10_000,
      maxWaiting: CAP,
    })
    expect(outcome.finished).toBe(true)
    expect(await s.waiting(endpointId)).toBe(CAP)
    expect(s.dropped()).toBe(12 - CAP)
    receiver.status = 200
    resultOf(
      'update_webhook_endpoint',
      await s.h.submit('update_webhook_endpoint', { endpointId, isActive: true }),
    )
    await s.flush()
    expect(receiver.received.map((body) => body.sequence)).toEqual([8, 9, 10, 11, 12])
  })

  it('leaves a sender for what the retention pass kept of an endpoint that is on', async () => {
    const s = await service()
    const endpointId = await endpointOf(s)
    receiver.status = 200
    // 12 waiting with no job, as a version before left an endpoint whose sender it lost.
    await backlogOf(s.h, { endpointId, count: 12, state: 'pending' })
    await pruneEndpoint(s.h.service.runtime, { endpointId, cutoff: 0, keep: 10_000, maxWaiting: CAP })
    expect(await s.waiting(endpointId)).toBe(CAP)
    await s.flush()
    expect(receiver.received.map((body) => body.sequence)).toEqual([8, 9, 10, 11, 12])
  })
})

describe('a delivery dropped while its try is under way', () => {
  it('is not put back on the queue when the try fails (the cap holds)', async () => {
    const s = await setUp({ maxWaitingPerEndpoint: 2, pauseThreshold: 100 })
    const { endpointId } = (await s.endpoint()) as { endpointId: string }
    let answer!: (status: number) => void
    let started!: () => void
    const inFlight = new Promise<void>((resolve) => {
      started = resolve
    })
    s.hooks.answer = () => {
      started()
      return new Promise<number>((resolve) => {
        answer = resolve
      })
    }
    await s.wallet('W0')
    const run = s.h.service.runtime.jobs.runDue()
    await inFlight
    // While W0's try waits for its answer, 3 more events: W0 and W1 are dropped, W2 and W3 kept.
    await s.wallet('W1')
    await s.wallet('W2')
    await s.wallet('W3')
    const listing = await s.h.query('latchkey_list_webhook_deliveries', { endpointId })
    expect(listing.status).toBe(200)
    const waiting = () => s.h.service.store.count('webhookDeliveries', 'waitingFor', endpointId)
    expect(await waiting()).toBe(2)
    s.hooks.answer = () => 200
    answer(503)
    await run
    await s.h.service.runtime.jobs.idle()
    const rows = (await s.h.service.store.findBy('webhookDeliveries', 'endpointId', endpointId)).sort(
      (a, b) => a.sequence - b.sequence,
    )
    expect(rows.map((row) => [row.sequence, row.state, row.lastError ?? null])).toEqual([
      [1, 'failed', BACKLOG_FULL],
      [2, 'failed', BACKLOG_FULL],
      [3, expect.any(String), null],
      [4, expect.any(String), null],
    ])
    expect(rows[0]).toMatchObject({ attempts: 1, lastStatus: 503 })
    expect(await waiting()).toBeLessThanOrEqual(2)
    await s.flush()
    expect(s.sent.map((body) => body.sequence)).toEqual([3, 4])
  })
})
