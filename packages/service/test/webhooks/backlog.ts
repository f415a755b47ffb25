import type { WebhookDeliveryRow } from '../../src/kernel/store/model.ts'
import type { Harness } from '../../src/testing/harness.ts'
import { deliveryIdOf, listKeyOf, queueKeyOf } from '../../src/webhooks/recordEvent.ts'

/**
 * Writes `count` numbered deliveries waiting on the endpoint (in `state`: `paused` is how a version
 * before the resume by pages left an endpoint turned off or paused), recorded now, in
 * transactions of 500, and moves the endpoint's counter past them: an endpoint's backlog without
 * thousands of requests. Its events are `evt_backlog_<sequence, 6 digits>`.
 */
export async function backlogOf(
  h: Harness,
  input: { endpointId: string; count: number; state: 'pending' | 'paused' },
): Promise<void> {
  const { endpointId, count, state } = input
  const { store } = h.service
  const createdAt = h.clock.now()
  const endpoint = (await store.get('webhookEndpoints', endpointId))!
  for (let from = 1; from <= count; from += 500)
    await store.transaction(async (tx) => {
      for (let sequence = from; sequence < from + 500 && sequence <= count; sequence++) {
        const eventId = `evt_backlog_${String(sequence).padStart(6, '0')}`
        const listKey = listKeyOf(createdAt, h.service.runtime.newId())
        const row: WebhookDeliveryRow = {
          id: deliveryIdOf(eventId, endpointId),
          eventId,
          endpointId,
          organizationId: endpoint.organizationId,
          eventType: 'LATCHKEY_WALLET_CREATED',
          sequence,
          body: JSON.stringify({
            version: 1,
            id: eventId,
            type: 'LATCHKEY_WALLET_CREATED',
            organizationId: endpoint.organizationId,
            createdAtMs: String(createdAt),
            endpointId,
            sequence,
            data: { walletId: `w${sequence}`, addresses: [] },
          }),
          state,
          attempts: 0,
          createdAt,
          updatedAt: createdAt,
          waitingFor: endpointId,
          queueKey: queueKeyOf(sequence, listKey),
          listKey,
        }
        await tx.put('webhookDeliveries', row)
      }
    })
  await store.transaction(async (tx) => {
    const current = (await tx.get('webhookEndpoints', endpointId))!
    await tx.put('webhookEndpoints', { ...current, sequence: count })
  })
}
