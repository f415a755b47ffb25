// The resume job (resume.ts) pages the endpoint's queue by `queueKey` with a cursor (`after`) it
// saves when it hands on (its run budget spent). Rows a version before the fan-out left
// unnumbered sort after every numbered one (`b…`); the sender numbers them (`numberWaiting`, `a…`)
// as it drains. Once the job's saved cursor was among the `b…` keys, the rows the sender numbered
// meanwhile moved behind the cursor and the job never reached them: stored `paused` by the version
// before, they stayed paused, the sender stopped at the first of them for good, and everything
// behind it (every later event too) was stranded, listed `pending`, with no job to send it. A row
// numbered while a resume is under way now takes that resume in the numbering's transaction.
import { afterEach, describe, expect, it } from 'vitest'
import type { WebhookDeliveryRow } from '../../src/kernel/store/model.ts'
import type { Harness } from '../../src/testing/harness.ts'
import { deliveryIdOf, listKeyOf, queueKeyOf } from '../../src/webhooks/recordEvent.ts'
import { RESUME_AGAIN_MS } from '../../src/webhooks/resume.ts'
import { backlogOf } from './backlog.ts'
import { setUp } from './inProcessReceiver.ts'

const COUNT = 400
const DAY = 24 * 60 * 60_000

type Setup = Awaited<ReturnType<typeof setUp>>
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

/** `count` deliveries as a version before the fan-out (wave 10) left them: unnumbered, stored `paused`. */
async function unnumberedPaused(h: Harness, endpointId: string, count: number): Promise<void> {
  const { store } = h.service
  const endpoint = (await store.get('webhookEndpoints', endpointId))!
  await store.transaction(async (tx) => {
    for (let i = 1; i <= count; i++) {
      const createdAt = h.clock.now() + i
      const eventId = `evt_old_${String(i).padStart(6, '0')}`
      const listKey = listKeyOf(createdAt, h.service.runtime.newId())
      const row: WebhookDeliveryRow = {
        id: deliveryIdOf(eventId, endpointId),
        eventId,
        endpointId,
        organizationId: endpoint.organizationId,
        eventType: 'LATCHKEY_WALLET_CREATED',
        sequence: 0,
        body: JSON.stringify({
          version: 1,
          id: eventId,
          type: 'LATCHKEY_WALLET_CREATED',
          organizationId: endpoint.organizationId,
          createdAtMs: String(createdAt),
          endpointId,
          sequence: 0,
          data: { walletId: `w${i}`, addresses: [] },
        }),
        state: 'paused',
        attempts: 0,
        createdAt,
        updatedAt: createdAt,
        waitingFor: endpointId,
        queueKey: queueKeyOf(0, listKey),
        listKey,
      }
      await tx.put('webhookDeliveries', row)
    }
  })
}

const realNow = Date.now
afterEach(() => {
  Date.now = realNow
})

/**
 * The resume job's first page read takes over its run budget (5 s: a slow database; modelled by
 * moving Date.now on by 6 s during the read), so that run hands on with its cursor saved; its next
 * run's first read fails once (the process died / a transient database error): the job waits out
 * the queue's back-off while the sender drains.
 */
function slowFirstPageThenCrash(s: Setup) {
  const { store } = s.h.service
  const pageBy = store.pageBy.bind(store)
  const seen = { slow: 0, failures: 0, cursors: [] as string[] }
  store.pageBy = (async (table: string, query: { after?: string; limit?: number; field?: string }) => {
    const result = await pageBy(table as never, query as never)
    if (table === 'webhookDeliveries' && query.field === 'waitingFor' && query.limit === 200) {
      if (query.after === undefined && seen.slow === 0) {
        seen.slow++
        const skew = 6_000
        Date.now = () => realNow() + skew
      }
      // The resume job's cursor (numberWaiting's `after` is the bare 'b').
      if (query.after !== undefined && query.after.length > 1) {
        seen.cursors.push(query.after)
        if (seen.failures === 0) {
          seen.failures++
          throw new Error('the process died')
        }
      }
    }
    return result
  }) as typeof store.pageBy
  return seen
}

describe('resume by pages: rows a version before numbered as the sender drains', () => {
  it('an endpoint left off with unnumbered deliveries stored `paused`, resumed by a job that hands on and is rerun: every delivery goes, in order, none stranded', async () => {
    const s = await setUp({ busyDelayMs: 0 })
    const { h } = s
    const { store } = h.service
    const { endpointId } = await s.endpoint()
    await store.transaction(async (tx) => {
      const current = (await tx.get('webhookEndpoints', endpointId))!
      await tx.put('webhookEndpoints', { ...current, isActive: false })
    })
    await unnumberedPaused(h, endpointId, COUNT)
    h.clock.advance(2 * DAY)
    const seen = slowFirstPageThenCrash(s)
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: true })).status).toBe(200)
    await sendAll(s, COUNT)
    // The run that handed on is due again a little later; its rerun fails once and waits out the
    // queue's back-off.
    h.clock.advance(RESUME_AGAIN_MS)
    await sendAll(s, Number.POSITIVE_INFINITY)
    h.clock.advance(5 * 60_000)
    await sendAll(s, Number.POSITIVE_INFINITY)
    h.clock.advance(5 * 60_000)
    await sendAll(s, Number.POSITIVE_INFINITY)
    // The scenario happened: a saved cursor among the unnumbered keys, its rerun failed once.
    expect(seen.slow).toBe(1)
    expect(seen.failures).toBe(1)
    expect(seen.cursors[0]?.startsWith('b')).toBe(true)
    expect(await store.get('jobs', `job.resume.${endpointId}`)).toBeUndefined()
    const stranded = (await store.findBy('webhookDeliveries', 'waitingFor', endpointId)).filter(
      (row) => row.state === 'paused',
    )
    expect(stranded).toEqual([])
    expect(s.sent.map((body) => body.sequence)).toEqual(Array.from({ length: COUNT }, (_, i) => i + 1))
    // A new event after the resume goes too: nothing waits on the endpoint.
    await s.wallet('after the resume')
    await sendAll(s, COUNT + 1)
    expect(s.sent.map((body) => body.sequence)).toEqual(Array.from({ length: COUNT + 1 }, (_, i) => i + 1))
    expect(await store.findBy('webhookDeliveries', 'waitingFor', endpointId)).toEqual([])
  }, 60_000)

  it('control: the same with numbered deliveries stored `paused` (a cursor among numbered keys) sends every one', async () => {
    const s = await setUp({ busyDelayMs: 0 })
    const { h } = s
    const { store } = h.service
    const { endpointId } = await s.endpoint()
    await store.transaction(async (tx) => {
      const current = (await tx.get('webhookEndpoints', endpointId))!
      await tx.put('webhookEndpoints', { ...current, isActive: false })
    })
    await backlogOf(h, { endpointId, count: COUNT, state: 'paused' })
    h.clock.advance(2 * DAY)
    const { pageBy } = store
    const seen = { failures: 0 }
    const inner = pageBy.bind(store)
    let slow = 0
    store.pageBy = (async (table: string, query: { after?: string; limit?: number; field?: string }) => {
      const result = await inner(table as never, query as never)
      if (table === 'webhookDeliveries' && query.field === 'waitingFor' && query.limit === 200) {
        if (query.after === undefined && slow++ === 0) Date.now = () => realNow() + 6_000
        if (query.after?.startsWith('a') && seen.failures === 0) {
          seen.failures++
          throw new Error('the process died')
        }
      }
      return result
    }) as typeof store.pageBy
    expect((await h.submit('update_webhook_endpoint', { endpointId, isActive: true })).status).toBe(200)
    await sendAll(s, COUNT)
    // The run that handed on is due again a little later.
    h.clock.advance(RESUME_AGAIN_MS)
    await sendAll(s, COUNT)
    h.clock.advance(5 * 60_000)
    await sendAll(s, COUNT)
    expect(seen.failures).toBe(1)
    expect(s.sent.map((body) => body.sequence)).toEqual(Array.from({ length: COUNT }, (_, i) => i + 1))
  }, 60_000)
})
