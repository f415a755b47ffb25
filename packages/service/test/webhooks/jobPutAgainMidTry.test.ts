import { describe, expect, it } from 'vitest'
import { jobIdOf } from '../../src/webhooks/recordEvent.ts'
import { setUp } from './inProcessReceiver.ts'

/**
 * The head's own job (R) is sending its delivery d1 (try in flight). Meanwhile the tenant turns
 * the endpoint off and on again (`resumeEndpoint` puts job(d1) again under the same id) or
 * redelivers d1 (same id again). That fresh job (J) runs at once and finds R holding the lease.
 * It used to end, deleting the job row: R's failed try then threw to be retried, but the row was
 * gone, so d1 waited pending (attempts 1) with no job, and every later run of the endpoint left
 * the failed head to "its own job": the queue, later events included, was stranded for good. J
 * now sees the lease held by a run of its own job and tries again once it may be free: the row lives on.
 */
describe('a delivery job put again while its run still tries', () => {
  for (const how of ['none', 'toggle', 'redeliver'] as const)
    it(`${how === 'none' ? 'control: nothing happens during the try' : how === 'toggle' ? 'isActive false then true' : 'redeliver of the head'} while the head's failing try is in flight: every delivery goes out in order`, async () => {
      const { h, sent, hooks, endpoint, flush, wallet } = await setUp()
      const { endpointId } = await endpoint()
      const { runtime } = h.service
      const during: { off?: number; on?: number; redeliver?: number; jLeft?: boolean } = {}
      hooks.answer = async (index) => {
        if (index !== 0) return 200
        // R's first try is in flight.
        const [head] = await runtime.store.findBy('webhookDeliveries', 'waitingFor', endpointId)
        if (how === 'toggle') {
          during.off = (await h.submit('update_webhook_endpoint', { endpointId, isActive: false })).status
          h.clock.advance(1)
          during.on = (await h.submit('update_webhook_endpoint', { endpointId, isActive: true })).status
        } else if (how === 'redeliver') {
          // Redeliver an event whose delivery is pending: put back, same job id.
          during.redeliver = (
            await h.submit('latchkey_redeliver_webhook_event', { eventId: head!.eventId, endpointId })
          ).status
        }
        if (how !== 'none') {
          // The job put again runs now (another free sender slot) and ends: the lease is held.
          await runtime.jobs.runDue()
          for (let i = 0; i < 400; i++) {
            const job = await runtime.store.get('jobs', jobIdOf(head!.id))
            if (!job || job.state === 'pending') break
            await new Promise((resolve) => setTimeout(resolve, 5))
          }
          during.jLeft = true
        }
        return 500
      }
      await wallet('W1')
      await flush()
      if (how === 'toggle') expect([during.off, during.on]).toEqual([200, 200])
      if (how === 'redeliver') expect(during.redeliver).toBe(200)
      // Later events, and time enough for every retry.
      await wallet('W2')
      await wallet('W3')
      await flush()
      for (let i = 0; i < 8 && sent.length < 3; i++) {
        h.clock.advance(10 * 60_000)
        await flush()
      }
      const waiting = await runtime.store.findBy('webhookDeliveries', 'waitingFor', endpointId)
      const jobs = (await runtime.store.all('jobs')).filter((job) => job.kind === 'webhooks.deliver')
      expect(
        { sent: sent.map((body) => body.sequence), waiting: waiting.length },
        JSON.stringify({
          waiting: waiting.map((row) => [row.sequence, row.state, row.attempts]),
          jobs: jobs.map((job) => [job.id, job.state]),
        }),
      ).toEqual({ sent: [1, 2, 3], waiting: 0 })
    })
})
