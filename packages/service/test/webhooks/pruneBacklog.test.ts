// The hourly prune (`webhooks.prune`) and an endpoint's backlog. What waits (pending, paused) is
// never deleted, and an endpoint that is off keeps every delivery of its outage, as old as the
// outage: the prune used to read such a backlog in full on every pass (it stopped only at a row
// both young and within the cap), and a run cut short by its lease started over from the first
// endpoint, so one end user's endpoint off with a large old backlog kept the prune from ever
// reaching the endpoints created after theirs (their expired rows kept for good). Now one
// endpoint's prune reads a bounded number of rows it keeps, and a walk cut short goes on where it
// stopped. Counted, not timed: the delivery rows each endpoint's prune reads.
import { afterEach, describe, expect, it } from 'vitest'
import type { JobContext } from '../../src/kernel/JobQueue.ts'
import type { WebhookDeliveryRow } from '../../src/kernel/store/model.ts'
import { createHarness, type Harness, resultOf } from '../../src/testing/harness.ts'
import { deliveryIdOf, listKeyOf, queueKeyOf } from '../../src/webhooks/recordEvent.ts'
import { PRUNE_JOB, pruneEndpoint, pruneHandler, retentionSettings } from '../../src/webhooks/retention.ts'

const DAY = 24 * 60 * 60_000
const WEEK = 7 * DAY
/** Waiting deliveries on the early endpoint: several times what one endpoint's prune may read past (1,000). */
const BACKLOG = 4000
/** Most rows one endpoint's prune may read and keep: the waiting ones it reads past, and a page. */
const BOUND = 1000 + 200

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

async function setUp() {
  const h = await createHarness({ jobs: { pollMs: 3_600_000 } })
  harnesses.push(h)
  const runtime = h.service.runtime
  const endpoint = async (name: string, as?: Parameters<Harness['submit']>[2]) => {
    h.clock.advance(1)
    return resultOf(
      'create_webhook_endpoint',
      await h.submit(
        'create_webhook_endpoint',
        { url: `https://${name}.example.com/`, name, subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }] },
        as,
      ),
    ).endpointId as string
  }
  /** Writes `count` deliveries of the endpoint in `state`, recorded now, numbered from `from`. */
  const rows = async (endpointId: string, count: number, state: WebhookDeliveryRow['state'], from = 1) => {
    const endpoint = (await runtime.store.get('webhookEndpoints', endpointId))!
    const createdAt = h.clock.now()
    for (let start = 0; start < count; start += 500)
      await runtime.store.transaction(async (tx) => {
        for (let i = start; i < Math.min(count, start + 500); i++) {
          const sequence = from + i
          const eventId = `evt_${state}_${String(sequence).padStart(7, '0')}`
          const listKey = listKeyOf(createdAt, runtime.newId())
          const waiting = state === 'pending' || state === 'paused'
          await tx.put('webhookDeliveries', {
            id: deliveryIdOf(eventId, endpointId),
            eventId,
            endpointId,
            organizationId: endpoint.organizationId,
            eventType: 'ACTIVITY_UPDATES',
            sequence,
            body: '{}',
            state,
            attempts: waiting ? 0 : 1,
            createdAt,
            updatedAt: createdAt,
            ...(waiting ? { waitingFor: endpointId } : {}),
            queueKey: queueKeyOf(sequence, listKey),
            listKey,
          })
        }
      })
  }
  /** Delivery rows each endpoint's reads returned (`pageBy` of webhookDeliveries), while counting. */
  const read = new Map<string, number>()
  const pageBy = runtime.store.pageBy.bind(runtime.store)
  runtime.store.pageBy = (async (table, options) => {
    const found = await pageBy(table, options)
    if (table === 'webhookDeliveries' && options.field === 'endpointId')
      read.set(options.value, (read.get(options.value) ?? 0) + found.length)
    return found
  }) as typeof runtime.store.pageBy
  const left = (endpointId: string) => runtime.store.count('webhookDeliveries', 'endpointId', endpointId)
  const settledLeft = async (endpointId: string) =>
    (await runtime.store.findBy('webhookDeliveries', 'endpointId', endpointId)).filter(
      (row) => row.state === 'delivered' || row.state === 'failed',
    ).length
  return { h, runtime, endpoint, rows, read, left, settledLeft }
}

/** A run of the prune job (`signal` aborted: its time is up). */
const context = (jobId: string, signal = new AbortController().signal): JobContext => ({
  jobId,
  kind: PRUNE_JOB,
  attempt: 1,
  uncertain: false,
  signal,
})

describe('the prune and an endpoint’s backlog', () => {
  it('reads a bounded number of an endpoint’s waiting rows, old or young, and still reaches the endpoints after it', async () => {
    const { h, runtime, endpoint, rows, read, left, settledLeft } = await setUp()
    // An end user's endpoint, created first, turned off with its backlog.
    const sub = await h.createSubOrganization()
    const as = { as: sub.keys[0]!, organizationId: sub.organizationId }
    const theirs = await endpoint('end-user', as)
    expect(
      (await h.submit('update_webhook_endpoint', { endpointId: theirs, isActive: false }, as)).status,
    ).toBe(200)
    await rows(theirs, BACKLOG, 'pending')
    // The app's endpoint, created after it: delivered rows due to go (older than the window).
    const app = await endpoint('app')
    expect(theirs < app).toBe(true)
    await rows(app, 300, 'delivered')
    h.clock.advance(WEEK + DAY)
    const settings = retentionSettings()
    // Young backlog past the per-endpoint cap (the settled rows are what the cap counts).
    const young = await endpoint('young', as)
    await rows(young, BACKLOG, 'pending')

    await pruneHandler(runtime, settings, async () => undefined).run({}, context('prune'))
    expect(await settledLeft(app)).toBe(0)
    expect(await left(theirs)).toBe(BACKLOG)
    expect(await left(young)).toBe(BACKLOG)
    // Nothing settled on either: none of their rows is read.
    expect(read.get(theirs) ?? 0).toBe(0)
    expect(read.get(young) ?? 0).toBe(0)

    // Settled rows among the waiting ones (redelivered, or settled since): read past at most
    // 1,000 waiting rows (and a page), whatever the backlog.
    await rows(theirs, 10, 'delivered', BACKLOG + 1)
    read.clear()
    const outcome = await pruneEndpoint(runtime, {
      endpointId: theirs,
      cutoff: h.clock.now() + 1,
      keep: settings.maxPerEndpoint,
    })
    expect(outcome.finished).toBe(true)
    expect(read.get(theirs)!).toBeLessThanOrEqual(BOUND)
    expect(await left(theirs)).toBeGreaterThanOrEqual(BACKLOG)
  })

  it('deletes the settled rows in front of a backlog, by age and past the cap of settled rows, and reads none of the backlog', async () => {
    const { h, runtime, endpoint, rows, read, left, settledLeft } = await setUp()
    // Delivered for a while, then turned off: its settled rows are the oldest, the backlog after them.
    const paused = await endpoint('paused')
    await rows(paused, 250, 'delivered')
    h.clock.advance(DAY)
    await rows(paused, 50, 'delivered', 251)
    h.clock.advance(DAY)
    await rows(paused, BACKLOG, 'paused', 301)
    // An ordinary endpoint: 250 settled rows past the window, 50 inside it and 20 waiting.
    const ordinary = await endpoint('ordinary')
    await rows(ordinary, 250, 'delivered')
    h.clock.advance(6 * DAY)
    await rows(ordinary, 50, 'delivered', 251)
    await rows(ordinary, 20, 'pending', 301)
    h.clock.advance(DAY + 1)
    const settings = retentionSettings({ maxAgeMs: WEEK, maxPerEndpoint: 40 })
    await pruneHandler(runtime, settings, async () => undefined).run({}, context('prune'))
    // The paused one's 300 settled rows were past the window or the cap: gone; its backlog stays.
    expect(await settledLeft(paused)).toBe(0)
    expect(await left(paused)).toBe(BACKLOG)
    // Its settled rows read (and deleted), and none of its backlog past the last of them.
    expect(read.get(paused)!).toBeLessThanOrEqual(300 + 200)
    // The ordinary one: the 250 expired rows gone, the newest 40 settled kept (the cap counts
    // settled rows, not the 20 waiting), the waiting ones kept.
    expect(await settledLeft(ordinary)).toBe(40)
    expect(await left(ordinary)).toBe(60)
  })

  it('a walk cut short hands on with its place: the next run goes on from the endpoint it stopped at', async () => {
    const { h, runtime, endpoint, rows, read, settledLeft } = await setUp()
    const first = await endpoint('first')
    const second = await endpoint('second')
    const third = await endpoint('third')
    for (const id of [first, second, third]) await rows(id, 300, 'delivered')
    // (Each endpoint's creation is an activity, its event a delivery waiting on the endpoints before it: not counted.)
    h.clock.advance(WEEK + DAY)
    let scheduled = 0
    const handler = pruneHandler(runtime, retentionSettings(), async () => {
      scheduled++
    })
    // Its time runs out while it prunes the second endpoint (after its first page).
    const controller = new AbortController()
    const pageBy = runtime.store.pageBy
    runtime.store.pageBy = (async (table, options) => {
      const found = await pageBy(table, options)
      if (table === 'webhookDeliveries' && options.value === second) controller.abort()
      return found
    }) as typeof runtime.store.pageBy
    await runtime.store.transaction((tx) =>
      runtime.jobs.enqueue(tx, PRUNE_JOB, {}, { id: 'webhooks.prune.1', runAfter: h.clock.now() }),
    )
    await handler.run({}, context('webhooks.prune.1', controller.signal))
    runtime.store.pageBy = pageBy
    expect(await settledLeft(first)).toBe(0)
    expect(await settledLeft(second)).toBe(100) // one page of 200 deleted before it stopped
    expect(await settledLeft(third)).toBe(300)
    expect(scheduled).toBe(0)
    // Put again with its place, a little later.
    const job = (await runtime.store.get('jobs', 'webhooks.prune.1'))!
    expect(job.state).toBe('pending')
    expect(JSON.parse('json' in job.payload ? job.payload.json : '{}')).toEqual({ after: first })
    expect(job.runAfter).toBeGreaterThan(h.clock.now())
    // The next run (through the job queue, by the wing's handler) starts at the second endpoint: the first is not read again.
    read.clear()
    h.clock.advance(2000)
    await runtime.jobs.runDue()
    await runtime.jobs.idle()
    expect(read.get(first) ?? 0).toBe(0)
    expect(await settledLeft(second)).toBe(0)
    expect(await settledLeft(third)).toBe(0)
    // The wing's own handler ran it, which enqueues the next periodic prune once the walk is done.
    const slot = Math.floor(h.clock.now() / retentionSettings().intervalMs) + 1
    expect((await runtime.store.get('jobs', `${PRUNE_JOB}.${slot}`))?.state).toBe('pending')
    expect(await runtime.store.get('jobs', 'webhooks.prune.1')).toBeUndefined()
  })

  it('a deleted endpoint’s prune cut short hands on and deletes the rest in its next run', async () => {
    const { h, runtime, endpoint, rows, left } = await setUp()
    const gone = await endpoint('gone')
    await rows(gone, 500, 'delivered')
    await rows(gone, 100, 'pending', 501)
    resultOf('delete_webhook_endpoint', await h.submit('delete_webhook_endpoint', { endpointId: gone }))
    const handler = pruneHandler(runtime, retentionSettings(), async () => undefined)
    const jobId = `${PRUNE_JOB}.${gone}`
    const controller = new AbortController()
    controller.abort()
    await handler.run({ endpointId: gone }, context(jobId, controller.signal))
    expect(await left(gone)).toBe(400)
    const job = (await runtime.store.get('jobs', jobId))!
    expect(JSON.parse('json' in job.payload ? job.payload.json : '{}')).toEqual({ endpointId: gone })
    // Put again due shortly (a run stopped with the service used to end as done: the rest kept for good).
    expect(job.state).toBe('pending')
    expect(job.runAfter).toBeLessThanOrEqual(h.clock.now() + 60_000)
    h.clock.advance(job.runAfter - h.clock.now())
    await runtime.jobs.runDue()
    await runtime.jobs.idle()
    expect(await left(gone)).toBe(0)
  })
})
