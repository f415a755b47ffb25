// An event recorded again under an id already fanned out to an endpoint (deliver.ts `fanOut`):
// the endpoint keeps its first delivery, as numbered and with its body, and the id takes no
// second number. Before, the second wrote a delivery row over the first under the same id (its
// number, unsent or not, gone from the queue and the listing; the receiver one id with two
// bodies) and took a number, so the numbers after it had a gap where the first's went missing.
// Event ids are made unique by their recorders (a send's status changes: sendWorker.ts); this
// is the fan-out's own guard.
import { afterEach, describe, expect, it } from 'vitest'
import { recordAppEvent } from '../../src/kernel/appEvents.ts'
import { createHarness, type Harness, resultOf } from '../../src/testing/harness.ts'
import { fanOut } from '../../src/webhooks/deliver.ts'
import { deliveryIdOf } from '../../src/webhooks/recordEvent.ts'

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

describe('an event id fanned out once', () => {
  it('keeps its first delivery (number and body) when recorded again; the next event takes the next number', async () => {
    // No transport: events are fanned out and wait, none sent (nothing else writes a delivery).
    const h = await createHarness({ webhooks: {} })
    harnesses.push(h)
    const { runtime } = h.service
    const { endpointId } = resultOf(
      'create_webhook_endpoint',
      await h.submit('create_webhook_endpoint', {
        url: 'http://127.0.0.1:9/hook',
        name: 'sends',
        subscriptions: [{ eventType: 'SEND_TRANSACTION_STATUS_UPDATES' }],
      }),
    )
    const record = (id: string, txHash: string) =>
      runtime.store.transaction((tx) =>
        recordAppEvent(runtime, tx, {
          id,
          organization: { id: h.organizationId },
          type: 'SEND_TRANSACTION_STATUS_UPDATES',
          data: { sendTransactionStatusId: 'send', caip2: 'eip155:1', status: 'BROADCASTED', txHash },
        }),
      )
    await record('send.status.BROADCASTED', '0x01')
    await fanOut(runtime, { deliver: false }) // (or the job worker's tick did)
    const first = await runtime.store.get(
      'webhookDeliveries',
      deliveryIdOf('send.status.BROADCASTED', endpointId),
    )
    expect(first?.sequence).toBe(1)
    h.clock.advance(1)
    // The same id with another body (what a send BROADCASTED again once wrote).
    await record('send.status.BROADCASTED', '0x02')
    await fanOut(runtime, { deliver: false })
    expect(
      await runtime.store.pageBy('webhookEvents', {
        field: 'waiting',
        value: 'yes',
        by: 'listKey',
        limit: 1,
      }),
    ).toEqual([])
    expect(
      await runtime.store.get('webhookDeliveries', deliveryIdOf('send.status.BROADCASTED', endpointId)),
    ).toEqual(first)
    expect((await runtime.store.get('webhookEndpoints', endpointId))?.sequence).toBe(1)
    h.clock.advance(1)
    await record('send.status.INCLUDED', '0x01')
    await fanOut(runtime, { deliver: false })
    const reply = await h.query('latchkey_list_webhook_deliveries', { endpointId })
    expect(reply.status).toBe(200)
    const listed = reply.body.webhookDeliveries as { eventId: string; sequence: number; body: string }[]
    expect(
      listed
        .map((row) => [
          row.sequence,
          row.eventId,
          (JSON.parse(row.body) as { data: { txHash: string } }).data.txHash,
        ])
        .sort(),
    ).toEqual([
      [1, 'send.status.BROADCASTED', '0x01'],
      [2, 'send.status.INCLUDED', '0x01'],
    ])
  })
})
