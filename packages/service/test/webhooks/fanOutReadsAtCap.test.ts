// The reads of a fan-out's transaction at a full backlog: the new deliveries' sources' counts, at
// most 20 sampled sources' counts, and a fixed few (count, head, tail, probes), about a page + 20.
// A new delivery of a source that holds as many as the heaviest (a backlog of sources holding one
// each, as many sign-ups' wallets leave) drops itself; its source's count, just read, says nothing
// of it is stored, so no page of it is read (it was: 2 x page + 20, found by the cap's audit).
import { afterEach, describe, expect, it } from 'vitest'
import type { WebhookDeliveryRow } from '../../src/kernel/store/model.ts'
import type { Transaction } from '../../src/kernel/store/Store.ts'
import { createHarness, type Harness } from '../../src/testing/harness.ts'
import { capBacklog } from '../../src/webhooks/capBacklog.ts'
import { listKeyOf, queueKeyOf } from '../../src/webhooks/recordEvent.ts'

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

const ENDPOINT = 'whe_reads'
const row = (sequence: number, organizationId: string): WebhookDeliveryRow => {
  const listKey = listKeyOf(1_000 + sequence, `id${sequence}`)
  return {
    id: `dlv_${sequence}`,
    eventId: `evt_${sequence}`,
    endpointId: ENDPOINT,
    organizationId,
    eventType: 'LATCHKEY_WALLET_CREATED',
    sequence,
    body: '{}',
    state: 'pending',
    attempts: 0,
    createdAt: 1_000 + sequence,
    updatedAt: 1_000 + sequence,
    waitingFor: ENDPOINT,
    queueKey: queueKeyOf(sequence, listKey),
    listKey,
  } as WebhookDeliveryRow
}

describe('a fan-out at a full backlog', () => {
  it('reads at most a page + 20 (+ a fixed few) for a page of new sources', async () => {
    const h = await createHarness({})
    harnesses.push(h)
    const { runtime } = h.service
    const CAP = 30
    const PAGE = 200
    // The backlog: CAP sources holding one delivery each.
    await runtime.store.transaction(async (tx) => {
      for (let i = 1; i <= CAP; i++) await tx.put('webhookDeliveries', row(i, `org_old${i}`))
    })
    // A page of new events, each from a source of its own (sign-ups).
    const adding = Array.from({ length: PAGE }, (_, i) => row(CAP + 1 + i, `org_new${i}`))
    let reads = 0
    const result = await runtime.store.transaction(async (tx) => {
      const counted = new Proxy(tx, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver)
          if (typeof value !== 'function') return value
          return (...args: unknown[]) => {
            if (['get', 'count', 'pageBy', 'findBy'].includes(String(property))) reads++
            return (value as (...a: unknown[]) => unknown).apply(target, args)
          }
        },
      }) as Transaction
      return capBacklog(runtime, counted, { endpointId: ENDPOINT, adding, cap: CAP })
    })
    expect(result.dropped).toHaveLength(PAGE)
    // count + head + tail + 4 probes, 20 sampled sources' counts, one count per new source.
    const bound = 1 + 1 + 1 + 4 + 20 + PAGE
    expect(reads, `bound ${bound}`).toBeLessThanOrEqual(bound)
  }, 60_000)
})
