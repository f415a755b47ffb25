// Audit: a delivery dropped from a full backlog while a drain (not its own job's) is trying it.
// The drain's failed try "hands over" the retry to the dropped delivery's own job (retryLater), and
// ends; that job later finds the delivery settled (failed, backlog_full) and ends too. The fan-out
// that dropped it enqueued a job for its new delivery, but that job ran while the drain still held
// the endpoint's lease and left the queue to the holder. So nobody sends the kept deliveries: they
// wait, on an endpoint that is on, until some later event (or a restart) starts a sender again.
import { describe, expect, it } from 'vitest'
import { setUp } from '../webhooks/inProcessReceiver.ts'

describe('a delivery dropped while another job tries it', () => {
  it('leaves a sender for the kept deliveries (no stall)', async () => {
    const s = await setUp({ maxWaitingPerEndpoint: 2, pauseThreshold: 100 })
    const { endpointId } = (await s.endpoint()) as { endpointId: string }
    const { jobs } = s.h.service.runtime
    const listing = async () =>
      expect((await s.h.query('latchkey_list_webhook_deliveries', { endpointId })).status).toBe(200)

    let answer!: (status: number) => void
    let started!: () => void
    const inFlight = new Promise<void>((resolve) => {
      started = resolve
    })
    // 1st request (W0, the job's own delivery): 200 at once. 2nd (W1, next in the same drain): held.
    s.hooks.answer = (index) => {
      if (index !== 1) return 200
      started()
      return new Promise<number>((resolve) => {
        answer = resolve
      })
    }
    // W0 and W1 fanned out together: one job, W0's; its drain sends W0 and then W1.
    await s.wallet('W0')
    await s.wallet('W1')
    await listing()
    const run = jobs.runDue()
    await inFlight
    // While W1's try waits: W2 and W3 (1 waiting + 2 added > cap 2) drop W1, keep W2 and W3, and
    // enqueue W2's job, which runs now and finds the lease held.
    await s.wallet('W2')
    await s.wallet('W3')
    await listing()
    await jobs.runDue()
    // W1's try fails: it stays dropped; its retry is "handed" to W1's own job.
    answer(503)
    await run
    await jobs.idle()
    // Time passes (every backoff due), the queue is stepped until nothing is due.
    for (let i = 0; i < 5; i++) {
      s.h.clock.advance(10 * 60_000)
      await s.flush()
    }
    const rows = (await s.h.service.store.findBy('webhookDeliveries', 'endpointId', endpointId))
      .sort((a, b) => a.sequence - b.sequence)
      .map((row) => [row.sequence, row.state, row.lastError ?? null])
    // The endpoint is on and its receiver answers 200: what was kept (W2, W3) must go.
    expect({ sent: s.sent.map((body) => body.sequence), rows }).toEqual({
      sent: [1, 3, 4],
      rows: [
        [1, 'delivered', null],
        [2, 'failed', 'backlog_full'],
        [3, 'delivered', null],
        [4, 'delivered', null],
      ],
    })
  }, 60_000)
})
