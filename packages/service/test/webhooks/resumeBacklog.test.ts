// An endpoint whose receiver was down for a weekend holds a backlog of waiting deliveries (every
// sub-organization's events go to the parent's endpoints). Pausing it (`isActive: false`, or the
// service's own pause after `pauseThreshold` failures) and resuming it (`isActive: true`) used to
// rewrite every waiting delivery in the activity's (or the sender's) one transaction: a resume of
// a large backlog was one huge transaction, slow, memory-hungry and liable to time out, and the
// endpoint could never be resumed. Counted, not timed: the rows each transaction writes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Transaction } from '../../src/kernel/store/Transaction.ts'
import { deliveryIdOf } from '../../src/webhooks/recordEvent.ts'
import { backlogOf } from './backlog.ts'
import { setUp } from './inProcessReceiver.ts'

/** Waiting deliveries of the endpoint: far more than a page (200) of its queue. */
const BACKLOG = 1500
const DAY = 24 * 60 * 60_000

/** Rows written by each transaction (put or delete), and the most any one wrote since `reset`. */
const writes = new WeakMap<Transaction, number>()
let most = 0
const reset = () => {
  most = 0
}
const put = Transaction.prototype.put
const remove = Transaction.prototype.delete
beforeEach(() => {
  const count = (tx: Transaction) => {
    const n = (writes.get(tx) ?? 0) + 1
    writes.set(tx, n)
    most = Math.max(most, n)
  }
  Transaction.prototype.put = function (this: Transaction, ...args: Parameters<typeof put>) {
    count(this)
    return put.apply(this, args) as ReturnType<typeof put>
  } as typeof put
  Transaction.prototype.delete = function (this: Transaction, ...args: Parameters<typeof remove>) {
    count(this)
    return remove.apply(this, args)
  }
})
afterEach(() => {
  Transaction.prototype.put = put
  Transaction.prototype.delete = remove
})

type Setup = Awaited<ReturnType<typeof setUp>>
/** Runs due jobs until every delivery of the backlog went out (or nothing is due any more). */
async function sendAll(s: Setup, expected: number): Promise<void> {
  const { jobs } = s.h.service.runtime
  for (let round = 0; round < 5000 && s.sent.length < expected; round++) {
    await jobs.idle()
    if ((await jobs.runDue()) === 0) {
      await jobs.idle()
      if ((await jobs.runDue()) === 0) break
    }
  }
}

const sequences = (s: Setup) => s.sent.map((body) => body.sequence)
const inOrder = (count: number) => Array.from({ length: count }, (_, i) => i + 1)

type Store = Setup['h']['service']['store']

/** Turns the endpoint off as a version before this one left it: the row alone, nothing scheduled. */
async function turnOffAsBefore(store: Store, endpointId: string): Promise<void> {
  await store.transaction(async (tx) => {
    const current = (await tx.get('webhookEndpoints', endpointId))!
    await tx.put('webhookEndpoints', { ...current, isActive: false })
  })
}

/** The resume job's read of its second page fails once (its run ends after the first page committed). */
function dieAtSecondPage(store: Store): { failures: number } {
  const died = { failures: 0 }
  const pageBy = store.pageBy.bind(store)
  store.pageBy = (async (table: string, query: { after?: string }) => {
    if (table === 'webhookDeliveries' && query.after?.startsWith('a') && died.failures === 0) {
      died.failures++
      throw new Error('the process died')
    }
    return pageBy(table as never, query as never)
  }) as typeof store.pageBy
  return died
}

describe('an endpoint with a large backlog of waiting deliveries', () => {
  it('is turned off and on by transactions of a few rows each; the resume pages the backlog in durable jobs and sends every delivery, in order, after a pause longer than the retry window', async () => {
    const s = await setUp({ busyDelayMs: 0 })
    const { h } = s
    const { endpointId } = await s.endpoint()
    await backlogOf(h, { endpointId, count: BACKLOG, state: 'pending' })
    reset()
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: false })).status).toBe(200)
    // Turning off writes the endpoint and the activity's records: nothing per delivery.
    expect(most).toBeLessThan(20)
    // Off for three days (past the 24 h retry window): no delivery expires for that.
    h.clock.advance(3 * DAY)
    await sendAll(s, 1)
    expect(s.sent).toEqual([])
    reset()
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: true })).status).toBe(200)
    expect(most).toBeLessThan(20)
    // What the activity left runs in jobs, none of which writes more than a page of the queue (and its own rows).
    reset()
    await sendAll(s, BACKLOG)
    expect(most).toBeLessThanOrEqual(210)
    expect(sequences(s)).toEqual(inOrder(BACKLOG))
    expect(await h.service.store.findBy('webhookDeliveries', 'waitingFor', endpointId)).toEqual([])
    const failed = (await h.service.store.findBy('webhookDeliveries', 'endpointId', endpointId)).filter(
      (row) => row.state !== 'delivered',
    )
    expect(failed).toEqual([])
  }, 60_000)

  it('paused by the service after failing, in a transaction of a few rows; resumed, the failed head (in back-off) goes at once and the rest follows in order', async () => {
    const s = await setUp({ busyDelayMs: 0, pauseThreshold: 3 })
    const { h } = s
    const { endpointId } = await s.endpoint()
    await backlogOf(h, { endpointId, count: BACKLOG, state: 'pending' })
    s.hooks.answer = () => 503
    // The head's sender (enqueued as at a start with a transport) fails three times: paused.
    await h.service.store.transaction(async (tx) => {
      const [head] = await tx.pageBy('webhookDeliveries', {
        field: 'waitingFor',
        value: endpointId,
        by: 'queueKey',
        limit: 1,
      })
      await h.service.runtime.jobs.enqueue(
        tx,
        'webhooks.deliver',
        { deliveryId: head!.id },
        { id: `job.${head!.id}` },
      )
    })
    reset()
    for (let i = 0; i < 6; i++) {
      await sendAll(s, 1)
      h.clock.advance(5_000)
    }
    expect(s.requests()).toBe(3)
    expect(most).toBeLessThan(20)
    const [listed] = (await h.query('list_webhook_endpoints', {})).body.webhookEndpoints
    expect(listed.pausedAtMs).toBeDefined()
    // Still listed as waiting on a paused endpoint.
    const page = await h.query('latchkey_list_webhook_deliveries', {
      endpointId,
      paginationOptions: { limit: '3' },
    })
    expect(page.body.webhookDeliveries.map((row: { state: string }) => row.state)).toEqual([
      'paused',
      'paused',
      'paused',
    ])
    s.hooks.answer = () => 200
    h.clock.advance(2 * DAY)
    reset()
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: true })).status).toBe(200)
    expect(most).toBeLessThan(20)
    reset()
    await sendAll(s, BACKLOG)
    expect(most).toBeLessThanOrEqual(210)
    expect(sequences(s)).toEqual(inOrder(BACKLOG))
  }, 60_000)

  it('left paused by a version before this one (every waiting delivery stored `paused`) is resumed by pages and sends them all, in order', async () => {
    const s = await setUp({ busyDelayMs: 0 })
    const { h } = s
    const { endpointId } = await s.endpoint()
    const { store } = h.service
    await turnOffAsBefore(store, endpointId)
    await backlogOf(h, { endpointId, count: BACKLOG, state: 'paused' })
    h.clock.advance(2 * DAY)
    reset()
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: true })).status).toBe(200)
    expect(most).toBeLessThan(20)
    reset()
    await sendAll(s, BACKLOG)
    expect(most).toBeLessThanOrEqual(210)
    expect(sequences(s)).toEqual(inOrder(BACKLOG))
    expect(await store.findBy('webhookDeliveries', 'waitingFor', endpointId)).toEqual([])
  }, 60_000)

  it('resumed by a job that dies after its first page: the sender meanwhile sends past what it has not reached (counted from the resume, never expired), and its rerun finishes', async () => {
    const s = await setUp({ busyDelayMs: 0 })
    const { h } = s
    const { endpointId } = await s.endpoint()
    const { store } = h.service
    await backlogOf(h, { endpointId, count: BACKLOG, state: 'pending' })
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: false })).status).toBe(200)
    h.clock.advance(3 * DAY)
    const died = dieAtSecondPage(store)
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: true })).status).toBe(200)
    await sendAll(s, BACKLOG)
    expect(died.failures).toBe(1)
    // Its rerun waits out the queue's back-off (the clock stood still): it is still there.
    expect((await store.get('jobs', `job.resume.${endpointId}`))?.state).toBe('pending')
    expect(sequences(s)).toEqual(inOrder(BACKLOG))
    h.clock.advance(60_000)
    await sendAll(s, Number.POSITIVE_INFINITY)
    expect(await store.get('jobs', `job.resume.${endpointId}`)).toBeUndefined()
    expect(sequences(s)).toEqual(inOrder(BACKLOG))
    expect(await store.findBy('webhookDeliveries', 'waitingFor', endpointId)).toEqual([])
  }, 60_000)

  it('a resume job that dies after a page of deliveries a version before this one stored `paused` is rerun, and they all go, in order', async () => {
    const s = await setUp({ busyDelayMs: 0 })
    const { h } = s
    const { endpointId } = await s.endpoint()
    const { store } = h.service
    await turnOffAsBefore(store, endpointId)
    await backlogOf(h, { endpointId, count: BACKLOG, state: 'paused' })
    const died = dieAtSecondPage(store)
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: true })).status).toBe(200)
    await sendAll(s, BACKLOG)
    // The first page went; nothing past the first delivery still stored paused.
    expect(died.failures).toBe(1)
    expect(sequences(s)).toEqual(inOrder(200))
    expect(
      (await store.get('webhookDeliveries', deliveryIdOf('evt_backlog_000201', endpointId)))?.state,
    ).toBe('paused')
    h.clock.advance(60_000)
    await sendAll(s, BACKLOG)
    expect(sequences(s)).toEqual(inOrder(BACKLOG))
    expect(await store.findBy('webhookDeliveries', 'waitingFor', endpointId)).toEqual([])
  }, 60_000)
})
