import { describe, expect, it } from 'vitest'
import { setUp } from './inProcessReceiver.ts'

/**
 * An endpoint deleted mid-drain stops the drain (drainOnce: `!endpoint` → StopDrain). That check
 * used to come after the lease's renewal, which a deleted endpoint refuses: drainOnce returned
 * with nothing done, `drain` read the same pending queue again and called drainOnce again, a hot
 * loop of store reads until the run's 20 s budget (DRAIN_BUDGET_MS), holding a sender slot, then
 * put a turn back for the deleted endpoint. A renewal is due whenever the tries so far took more
 * than `timeoutMs` (a slow receiver): any tenant could set it off by deleting its endpoint.
 */
describe('an endpoint deleted mid-drain', () => {
  for (const renewalDue of [false, true])
    it(`${renewalDue ? 'when the lease is due for renewal' : 'control: lease not due for renewal'}: the drain stops at once, no spinning`, async () => {
      const { h, hooks, endpoint, flush, wallet } = await setUp()
      const { endpointId } = await endpoint()
      const { runtime } = h.service
      const store = runtime.store
      let deleted: number | undefined
      hooks.answer = async (index) => {
        if (index === 0) {
          // The first try was slow (more than timeoutMs since the lease): renew before the next.
          if (renewalDue) h.clock.advance(10_000 + 2_000)
          deleted = (await h.submit('delete_webhook_endpoint', { endpointId })).status
        }
        return 200
      }
      // One fan-out batch of 3: the head's job sends them all.
      await wallet('A')
      await wallet('B')
      await wallet('C')
      let reads = 0
      let startedSpin = 0
      const get = store.get.bind(store)
      store.get = (async (table: string, id: string) => {
        if (deleted !== undefined && table === 'webhookDeliveries') {
          reads++
          if (reads === 1) startedSpin = Date.now()
          // Bounded: break the loop (the run fails and is retried later) once it is plain.
          if (reads > 2000) throw new Error('spinning')
        }
        return get(table as never, id)
      }) as typeof store.get
      await flush()
      const spinMs = startedSpin ? Date.now() - startedSpin : 0
      expect(deleted).toBe(200)
      // Stopping reads the next delivery and the endpoint once (a handful of reads at most); the
      // loop reads the same deliveries thousands of times a second (the read count is capped here).
      expect(reads, `reads of webhookDeliveries after the delete: ${reads} in ${spinMs} ms`).toBeLessThan(50)
    })
})
