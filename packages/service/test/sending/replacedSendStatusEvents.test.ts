// A replaced send's status events (SEND_TRANSACTION_STATUS_UPDATES): a send left unmined past
// `replaceAfterMs` is replaced (made PENDING with the new version, then BROADCASTED again with its
// hash). Each status change is an event of its own id, numbered once on the endpoint: the receiver
// gets BROADCASTED (first hash), BROADCASTED (the replacement's) and INCLUDED as 1, 2, 3, each
// once, and deduplicating on the event id (as docs/webhooks.md says to) drops none. Before, both
// BROADCASTED were `<send>.status.BROADCASTED`: the second overwrote the first's delivery (its
// number gone from the listing and, with the receiver down meanwhile, never sent) and a receiver
// got one id with two hashes. No PENDING goes out: the docs list BROADCASTED, INCLUDED, FAILED.
import type { WebhookEventBody } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { type Harness, resultOf } from '../../src/testing/harness.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'
import { useLoopbackReceiver } from '../webhooks/loopbackReceiver.ts'
import { byHandService, chainForFile, DEAD, PRICE, passes } from './byHand.ts'
import { endUser } from './sendSupport.ts'

const chain = chainForFile()
const rx = useLoopbackReceiver()

type Status = { sendTransactionStatusId: string; status: string; txHash?: string }
type Listed = { eventId: string; sequence: number; state: string; attempts: number; body: string }

/** Polls `done` (real time) until it holds; throws with `what` after `withinMs`. */
async function until(done: () => boolean | Promise<boolean>, what: string, withinMs = 20_000) {
  const deadline = Date.now() + withinMs
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** The end user's deliveries, oldest number first (the listing fans out whatever waits first). */
async function listed(h: Harness, as: Parameters<Harness['query']>[2]): Promise<Listed[]> {
  const reply = await h.query('latchkey_list_webhook_deliveries', { paginationOptions: { limit: '100' } }, as)
  expect(reply.status).toBe(200)
  return (reply.body.webhookDeliveries as Listed[]).sort((a, b) => a.sequence - b.sequence)
}

/**
 * A send broadcast, replaced and mined, its end user's endpoint answering `downMeanwhile ? 500 :
 * 200` from before its first broadcast until the replacement's BROADCASTED is numbered.
 */
async function replacedSend(downMeanwhile: boolean) {
  rx.received.length = 0
  rx.status = downMeanwhile ? 500 : 200
  const h = await byHandService(chain, fetch, {
    webhooks: { transport: nodeWebhookTransport() },
    jobs: { pollMs: 20 },
  })
  const worker = startSendWorker(h.service.runtime, { loop: false })
  try {
    const user = await endUser(h)
    resultOf(
      'create_webhook_endpoint',
      await h.submit(
        'create_webhook_endpoint',
        {
          url: `http://127.0.0.1:${rx.port}/`,
          name: 'sends',
          subscriptions: [{ eventType: 'SEND_TRANSACTION_STATUS_UPDATES' }],
        },
        user.as,
      ),
    )
    await chain.fund(user.from, 10n ** 16n)
    const id = resultOf(
      'eth_send_transaction',
      await user.send({ calls: [{ to: DEAD, value: '1' }], ...PRICE }),
    ).sendTransactionStatusId as string
    const row = () => h.service.store.get('sendTransactions', id)
    let first: string
    let second: string
    await chain.rpc('evm_setAutomine', [false])
    try {
      await worker.pass()
      const broadcast = (await row())!
      expect(broadcast.status).toBe('BROADCASTED')
      first = broadcast.txHash
      // The first BROADCASTED is numbered (and, with the receiver up, delivered) before the
      // replacement is recorded.
      await until(async () => (await listed(h, user.as)).length === 1, 'the first delivery')
      if (!downMeanwhile) await until(() => rx.received.length === 1, 'the first BROADCASTED')
      // Down: it was tried and refused (it waits for its retry).
      else await until(async () => (await listed(h, user.as))[0]!.attempts > 0, 'a failed try')
      await passes(h, worker, 1, 61_000) // stuck past replaceAfterMs: replaced (PENDING)
      expect((await row())!.status).toBe('PENDING')
      await passes(h, worker, 1, 300) // the replacement's broadcast
      const replaced = (await row())!
      expect(replaced.status).toBe('BROADCASTED')
      second = replaced.txHash
      expect(second).not.toBe(first)
      expect(replaced.priorHashes).toEqual([first])
      // Its BROADCASTED is numbered too (the listing fans out what waits): two deliveries.
      await until(async () => (await listed(h, user.as)).length === 2, 'the second delivery', 5_000)
      if (!downMeanwhile) await until(() => rx.received.length === 2, 'the second BROADCASTED')
      rx.status = 200
      await chain.rpc('evm_mine', [])
    } finally {
      await chain.rpc('evm_setAutomine', [true])
    }
    for (let i = 0; i < 20 && (await row())!.status !== 'INCLUDED'; i++) await passes(h, worker, 1, 300)
    expect((await row())!.status).toBe('INCLUDED')
    // Deliveries that failed while the receiver was down are retried once their backoff is due.
    await until(() => {
      h.clock.advance(5_000)
      return rx.received.some((body) => (body.data as Status).status === 'INCLUDED')
    }, 'the INCLUDED event')
    await new Promise((resolve) => setTimeout(resolve, 300)) // anything sent again would arrive
    return { id, first, second, received: [...rx.received], listed: await listed(h, user.as) }
  } finally {
    await worker.stop()
    await h.service.close()
  }
}

function expectEveryChange(
  outcome: Awaited<ReturnType<typeof replacedSend>>,
  received: WebhookEventBody[] = outcome.received,
) {
  const { id, first, second, listed } = outcome
  // 1, 2, 3, each once, in order: the first hash, the replacement's, then mined.
  expect(received.map((body) => body.sequence)).toEqual([1, 2, 3])
  expect(
    received.map((body) => {
      const data = body.data as Status
      return [data.sendTransactionStatusId, data.status, data.txHash]
    }),
  ).toEqual([
    [id, 'BROADCASTED', first],
    [id, 'BROADCASTED', second],
    [id, 'INCLUDED', second],
  ])
  // Three status changes, three ids: deduplicating on the id keeps every one.
  expect(new Set(received.map((body) => body.id)).size).toBe(3)
  // The listing keeps each delivery under the id and number it was sent with, delivered.
  expect(listed.map((row) => [row.sequence, row.eventId, row.state])).toEqual(
    received.map((body) => [body.sequence, body.id, 'delivered']),
  )
  expect(listed.map((row) => (JSON.parse(row.body) as WebhookEventBody).data)).toEqual(
    received.map((body) => body.data),
  )
}

describe('a replaced send’s status events', { timeout: 120_000 }, () => {
  it('arrive as 1..n with an id each, the replacement’s hash in its own event, and no PENDING', async () => {
    expectEveryChange(await replacedSend(false))
  })

  it('all arrive once the receiver comes back, when it was down during the replacement', async () => {
    const outcome = await replacedSend(true)
    // A delivery may arrive again should a try's answer be lost: the same id, the same body.
    const byId = new Map(outcome.received.map((body) => [body.id, body]))
    for (const body of outcome.received) expect(body).toEqual(byId.get(body.id))
    expectEveryChange(outcome, [...byId.values()])
    // The first was refused while the receiver was down, and sent again under its id.
    expect(outcome.listed[0]!.attempts).toBeGreaterThan(1)
  })
})
