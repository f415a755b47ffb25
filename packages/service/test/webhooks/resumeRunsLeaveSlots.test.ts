// A resume (`isActive: true`) starts a `webhooks.resume` job that pages the endpoint's backlog,
// and any tenant can make one per endpoint, a sub-organization's user too (an endpoint's backlog
// is unbounded while it is off). Uncapped, and put back due at once after each run, those runs
// took every run slot the senders' cap (`WEBHOOK_SENDERS`) leaves, and another organization's job
// (a sign-in code's delivery) due meanwhile was not started; a run whose resume was replaced (the
// endpoint turned off and on again) kept paging for its whole budget. Resume runs are capped a
// process, a run that hands on is due again a little later, and a replaced run writes nothing more.
// A page is slowed here (a large backlog on a loaded database) while the backlog stays small.
import { afterEach, describe, expect, it } from 'vitest'
import type { WebhookDeliveryRow } from '../../src/kernel/store/model.ts'
import { Transaction } from '../../src/kernel/store/Transaction.ts'
import { resultOf, testKey } from '../../src/testing/harness.ts'
import { RESUME_AGAIN_MS } from '../../src/webhooks/resume.ts'
import { backlogOf } from './backlog.ts'
import { setUp } from './inProcessReceiver.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const ENDPOINTS = 8
const DAY = 24 * 60 * 60_000

type Setup = Awaited<ReturnType<typeof setUp>>
type Store = Setup['h']['service']['store']

const restores: (() => void)[] = []
afterEach(() => {
  for (const restore of restores.splice(0).reverse()) restore()
})

/** Each read of a page of an endpoint's queue (200 rows) first awaits `before(query)`. */
function onQueuePage(store: Store, before: (query: { after?: string }) => Promise<unknown>): void {
  const pageBy = store.pageBy.bind(store)
  store.pageBy = (async (table: string, query: { field?: string; limit?: number; after?: string }) => {
    if (table === 'webhookDeliveries' && query.field === 'waitingFor' && query.limit === 200)
      await before(query)
    return pageBy(table as never, query as never)
  }) as typeof store.pageBy
  restores.push(() => {
    store.pageBy = pageBy as typeof store.pageBy
  })
}

/** Turns the endpoint off as a version before this one left it: the row alone, nothing scheduled. */
async function turnOffAsBefore(store: Store, endpointId: string): Promise<void> {
  await store.transaction(async (tx) => {
    const current = (await tx.get('webhookEndpoints', endpointId))!
    await tx.put('webhookEndpoints', { ...current, isActive: false })
  })
}

/** Runs due jobs until `expected` deliveries went out (or nothing is due any more). */
async function sendAll(s: Setup, expected: number): Promise<void> {
  const { jobs } = s.h.service.runtime
  for (let round = 0; round < 2000 && s.sent.length < expected; round++) {
    await jobs.idle()
    if ((await jobs.runDue()) === 0) {
      await jobs.idle()
      if ((await jobs.runDue()) === 0) break
    }
  }
}

describe('resume jobs and the shared job queue', () => {
  it("a sub-organization's resumes of many endpoints leave a slot for another organization's job, and each backlog is still resumed", async () => {
    const s = await setUp({ busyDelayMs: 0 })
    const { h } = s
    const { store, runtime } = h.service
    const key = testKey()
    const sub = await h.createSubOrganization({ keys: [key] })
    const as = { organizationId: sub.organizationId, as: key }
    const endpointIds: string[] = []
    for (let i = 0; i < ENDPOINTS; i++) {
      const { endpointId } = resultOf(
        'create_webhook_endpoint',
        await h.submit(
          'create_webhook_endpoint',
          {
            url: `http://127.0.0.1:9/e${i}`,
            name: `e${i}`,
            subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
          },
          as,
        ),
      )
      endpointIds.push(endpointId)
      expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: false }, as)).status).toBe(
        200,
      )
      await backlogOf(h, { endpointId, count: 600, state: 'pending' })
    }
    // Another organization's job kind (a one-time code's delivery stands for it).
    let otherStarted = false
    runtime.jobs.handle('test.otherOrganization', {
      async run() {
        otherStarted = true
      },
    })
    // Receivers that never answer hold the senders' slots too.
    let answer = () => {}
    const answered = new Promise<void>((resolve) => {
      answer = resolve
    })
    s.hooks.answer = async () => {
      await answered
      return 200
    }
    restores.push(answer)
    let slow = true
    onQueuePage(store, () => (slow ? sleep(400) : Promise.resolve()))
    for (const endpointId of endpointIds)
      expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: true }, as)).status).toBe(200)
    await runtime.jobs.runDue()
    await sleep(50)
    const running = (await store.findBy('jobs', 'state', 'running')).map((job) => job.kind)
    // The other organization's job becomes due while the resumes run.
    await store.transaction((tx) => runtime.jobs.enqueue(tx, 'test.otherOrganization', {}, { id: 'other' }))
    await runtime.jobs.runDue()
    await sleep(50)
    const startedAtOnce = otherStarted
    const resumes = running.filter((kind) => kind === 'webhooks.resume').length
    const senders = running.filter((kind) => kind === 'webhooks.deliver').length
    expect(resumes).toBeGreaterThan(0)
    expect(resumes + senders).toBeLessThan(8)
    expect(startedAtOnce).toBe(true)
    // Control: every endpoint's resume still runs to its end, and its backlog goes.
    slow = false
    answer()
    s.hooks.answer = () => 200
    for (let round = 0; round < 40 && s.sent.length < ENDPOINTS * 600; round++) {
      await sendAll(s, ENDPOINTS * 600)
      h.clock.advance(RESUME_AGAIN_MS)
    }
    for (const endpointId of endpointIds)
      expect(await store.get('jobs', `job.resume.${endpointId}`)).toBeUndefined()
    expect(s.sent).toHaveLength(ENDPOINTS * 600)
  }, 60_000)

  it('a run that spent its budget hands on due a little later, not at once', async () => {
    const s = await setUp({ busyDelayMs: 0 })
    const { h } = s
    const { store, runtime } = h.service
    const { endpointId } = await s.endpoint()
    await turnOffAsBefore(store, endpointId)
    await backlogOf(h, { endpointId, count: 1000, state: 'paused' })
    // The resume's first page takes longer than its run's budget (5 s).
    const realNow = Date.now
    restores.push(() => {
      Date.now = realNow
    })
    let first = true
    onQueuePage(store, async (query) => {
      if (query.after === undefined && first) {
        first = false
        const skew = 6_000
        Date.now = () => realNow() + skew
      }
    })
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: true })).status).toBe(200)
    await sendAll(s, 200)
    const job = await store.get('jobs', `job.resume.${endpointId}`)
    expect(job?.state).toBe('pending')
    expect(job!.runAfter).toBe(h.clock.now() + RESUME_AGAIN_MS)
    expect(s.sent).toHaveLength(200)
    // Nothing else due: the clock stands still, the job waits.
    expect(await runtime.jobs.runDue()).toBe(0)
    h.clock.advance(RESUME_AGAIN_MS)
    await sendAll(s, 1000)
    expect(s.sent.map((body) => body.sequence)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1))
    expect(await store.get('jobs', `job.resume.${endpointId}`)).toBeUndefined()
  }, 60_000)

  it('a run whose resume was replaced (turned off and on again) writes nothing more: the new resume pages it all, in order', async () => {
    const s = await setUp({ busyDelayMs: 0 })
    const { h } = s
    const { store } = h.service
    const { endpointId } = await s.endpoint()
    await turnOffAsBefore(store, endpointId)
    await backlogOf(h, { endpointId, count: 1000, state: 'paused' })
    h.clock.advance(DAY)
    // The first run's second page is read once the test has turned the endpoint off and on again.
    let reached = () => {}
    const atSecondPage = new Promise<void>((resolve) => {
      reached = resolve
    })
    let go = () => {}
    const replaced = new Promise<void>((resolve) => {
      go = resolve
    })
    let held = false
    onQueuePage(store, async (query) => {
      if (query.after?.startsWith('a') && query.after.length > 1 && !held) {
        held = true
        reached()
        await replaced
      }
    })
    // What is written resumed by the first resume once it was replaced.
    let firstFrom = -1
    let counting = false
    let writtenForReplaced = 0
    const put = Transaction.prototype.put
    restores.push(() => {
      Transaction.prototype.put = put
    })
    Transaction.prototype.put = function (this: Transaction, ...args: Parameters<typeof put>) {
      const [table, row] = args as unknown as [string, WebhookDeliveryRow]
      if (counting && table === 'webhookDeliveries' && row.state === 'pending' && row.retryFrom === firstFrom)
        writtenForReplaced++
      return put.apply(this, args) as ReturnType<typeof put>
    } as typeof put
    firstFrom = h.clock.now()
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: true })).status).toBe(200)
    const running = sendAll(s, 1000)
    await atSecondPage
    h.clock.advance(1)
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: false })).status).toBe(200)
    h.clock.advance(1)
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: true })).status).toBe(200)
    counting = true
    go()
    await running
    await sendAll(s, 1000)
    expect(writtenForReplaced).toBe(0)
    expect(s.sent.map((body) => body.sequence)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1))
    expect(await store.findBy('webhookDeliveries', 'waitingFor', endpointId)).toEqual([])
    expect(await store.get('jobs', `job.resume.${endpointId}`)).toBeUndefined()
  }, 60_000)
})
