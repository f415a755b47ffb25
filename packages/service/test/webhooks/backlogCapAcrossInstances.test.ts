// Two instances on one PostgreSQL database record events for one paused endpoint at once, fan them
// out at once and redeliver dropped ones at once: the endpoint's waiting deliveries never exceed
// `maxWaitingPerEndpoint` (each fan-out counts and drops in its SERIALIZABLE transaction, and two
// of them conflict on the endpoint's counter), and a resume sends exactly what was kept, in order,
// to a real receiver. And the operator's endpoint, paused, while one sub-organization floods it
// from both instances and others record a few events: the flood drops its own oldest, never the
// others' (the source holding the most is dropped from, counted in the same transactions).
import { describe, expect, it } from 'vitest'
import { type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { BACKLOG_FULL } from '../../src/webhooks/capBacklog.ts'
import { fanOut } from '../../src/webhooks/deliver.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'
import { twoInstances, usePostgres } from '../support/twoInstances.ts'
import { useLoopbackReceiver } from './loopbackReceiver.ts'

const CAP = 20

const postgres = usePostgres()
const receiver = useLoopbackReceiver()

const until = async (what: () => Promise<boolean>, clock: Harness['clock'], ms = 30_000) => {
  const deadline = Date.now() + ms
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error('timed out')
    clock.advance(200)
    await new Promise((done) => setTimeout(done, 20))
  }
}

describe("the cap on an endpoint's backlog across two instances on PostgreSQL", { timeout: 180_000 }, () => {
  it('holds while both record, fan out and redeliver at once, and a resume sends what was kept', async () => {
    const [a, b] = await twoInstances(postgres.cluster, 'webhooks_backlog_cap', {
      webhooks: { transport: nodeWebhookTransport(), pauseThreshold: 1, maxWaitingPerEndpoint: CAP },
      jobs: { pollMs: 20, backoff: { baseMs: 20, maxMs: 100 } },
    })
    const { store } = a.service
    let sampling = true
    let most = 0
    try {
      const port = receiver.port
      const { endpointId } = resultOf(
        'create_webhook_endpoint',
        await a.submit('create_webhook_endpoint', {
          url: `http://127.0.0.1:${port}/hook`,
          name: 'app',
          subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
        }),
      ) as { endpointId: string }
      // Its receiver fails: paused after one try, it still gets every event.
      expect((await a.submit('create_wallet', { walletName: 'W0', accounts: [] })).status).toBe(200)
      await until(
        async () => (await store.get('webhookEndpoints', endpointId))?.pausedAt !== undefined,
        a.clock,
      )
      const waiting = () => store.count('webhookDeliveries', 'waitingFor', endpointId)
      // Watches the count all along (a committed read every few ms).
      const sampler = (async () => {
        while (sampling) {
          most = Math.max(most, await waiting())
          await new Promise((done) => setTimeout(done, 3))
        }
      })()
      let made = 1
      const fanOuts = () =>
        Promise.all([a, b].map((h) => fanOut(h.service.runtime, { deliver: true, maxWaiting: CAP })))
      // Three rounds of 25 wallets, recorded on both at once, each with fan-outs racing on both.
      for (let round = 0; round < 3; round++) {
        const replies = await Promise.all([
          ...Array.from({ length: 25 }, (_, i) =>
            [a, b][i % 2]!.submit('create_wallet', { walletName: `R${round}.${i}`, accounts: [] }),
          ),
          fanOuts(),
          fanOuts(),
        ])
        made += 25
        expect(replies.slice(0, 25).map((reply) => (reply as { status: number }).status)).toEqual(
          Array(25).fill(200),
        )
        await fanOuts()
        expect(await waiting()).toBe(CAP)
      }
      const rows = await store.findBy('webhookDeliveries', 'endpointId', endpointId)
      expect(rows.length).toBe(made)
      const droppedRows = rows.filter((row) => row.state === 'failed' && row.lastError === BACKLOG_FULL)
      expect(droppedRows.length).toBe(made - CAP)
      // Numbered once each, no gap; the dropped ones are the oldest.
      expect(rows.map((row) => row.sequence).sort((x, y) => x - y)).toEqual(
        Array.from({ length: made }, (_, i) => i + 1),
      )
      expect(Math.max(...droppedRows.map((row) => row.sequence))).toBe(made - CAP)

      // Redeliveries of dropped events on both instances, racing more events and fan-outs on both:
      // each redelivery is refused (the backlog is full) or, ordered before a fan-out that then
      // drops the oldest again, let in; the count never goes past the cap.
      const results = await Promise.all([
        ...droppedRows
          .slice(0, 6)
          .map((row, i) =>
            [a, b][i % 2]!.submit('latchkey_redeliver_webhook_event', { eventId: row.eventId, endpointId }),
          ),
        ...Array.from({ length: 10 }, (_, i) =>
          [b, a][i % 2]!.submit('create_wallet', { walletName: `L${i}`, accounts: [] }),
        ),
        fanOuts(),
        fanOuts(),
      ])
      made += 10
      for (const reply of results.slice(0, 6) as { status: number; body: unknown }[]) {
        expect([200, 400]).toContain(reply.status)
        if (reply.status === 400) expect(JSON.stringify(reply.body)).toContain('parameters.endpointId')
      }
      await fanOuts()
      expect(await waiting()).toBe(CAP)
      sampling = false
      await sampler
      expect(most).toBeLessThanOrEqual(CAP)

      // Resumed with the receiver answering: exactly the kept ones arrive, in their order.
      const kept = (await store.findBy('webhookDeliveries', 'waitingFor', endpointId))
        .map((row) => row.sequence)
        .sort((x, y) => x - y)
      expect(kept.length).toBe(CAP)
      receiver.status = 200
      resultOf(
        'update_webhook_endpoint',
        await b.submit('update_webhook_endpoint', { endpointId, isActive: true }),
      )
      await until(async () => receiver.received.length >= CAP && (await waiting()) === 0, a.clock)
      await new Promise((done) => setTimeout(done, 300))
      expect(receiver.received.map((body) => body.sequence)).toEqual(kept)
    } finally {
      sampling = false
      await a.service.close()
      await b.service.close()
    }
  })

  it("one sub-organization's flood from both instances drops its own, not the others'", async () => {
    const [a, b] = await twoInstances(postgres.cluster, 'webhooks_backlog_cap_sources', {
      webhooks: {
        transport: async () => ({ status: 503, body: '' }),
        pauseThreshold: 1,
        maxWaitingPerEndpoint: CAP,
      },
      jobs: { pollMs: 20, backoff: { baseMs: 20, maxMs: 100 } },
    })
    const { store } = a.service
    let sampling = true
    let most = 0
    try {
      const { endpointId } = resultOf(
        'create_webhook_endpoint',
        await a.submit('create_webhook_endpoint', {
          url: 'http://127.0.0.1:9/hook',
          name: 'operator',
          subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
        }),
      ) as { endpointId: string }
      expect((await a.submit('create_wallet', { walletName: 'operator', accounts: [] })).status).toBe(200)
      await until(
        async () => (await store.get('webhookEndpoints', endpointId))?.pausedAt !== undefined,
        a.clock,
      )
      const user = async () => {
        const key = testKey()
        const { organizationId } = await a.createSubOrganization({ keys: [key] })
        return { organizationId, as: key }
      }
      const attacker = await user()
      const victims = [await user(), await user(), await user()]
      const waiting = () => store.count('webhookDeliveries', 'waitingFor', endpointId)
      const sampler = (async () => {
        while (sampling) {
          most = Math.max(most, await waiting())
          await new Promise((done) => setTimeout(done, 3))
        }
      })()
      const fanOuts = () =>
        Promise.all([a, b].map((h) => fanOut(h.service.runtime, { deliver: true, maxWaiting: CAP })))
      // Each victim records two wallets, interleaved with the attacker's 60 from both instances and
      // fan-outs racing on both.
      const replies = await Promise.all([
        ...Array.from({ length: 60 }, (_, i) =>
          [a, b][i % 2]!.submit('create_wallet', { walletName: `A${i}`, accounts: [] }, attacker),
        ),
        ...victims.flatMap((victim, v) =>
          [0, 1].map((i) =>
            [b, a][(v + i) % 2]!.submit('create_wallet', { walletName: `V${v}.${i}`, accounts: [] }, victim),
          ),
        ),
        fanOuts(),
        fanOuts(),
        fanOuts(),
      ])
      expect(replies.slice(0, 66).map((reply) => (reply as { status: number }).status)).toEqual(
        Array(66).fill(200),
      )
      await fanOuts()
      await fanOuts()
      sampling = false
      await sampler
      expect(most).toBeLessThanOrEqual(CAP)
      expect(await waiting()).toBe(CAP)
      const rows = await store.findBy('webhookDeliveries', 'endpointId', endpointId)
      const dropped = rows.filter((row) => row.lastError === BACKLOG_FULL)
      // 1 (the operator's) + 60 + 6 recorded, 20 kept: every one dropped is the attacker's, and
      // each victim's two still wait, as does the operator's.
      expect(rows.length).toBe(67)
      expect(new Set(dropped.map((row) => row.organizationId))).toEqual(new Set([attacker.organizationId]))
      expect(dropped.length).toBe(47)
      for (const victim of victims)
        expect(
          rows.filter((row) => row.organizationId === victim.organizationId && row.waitingFor === endpointId)
            .length,
        ).toBe(2)
      // Of the attacker's, its newest wait.
      const attackers = rows
        .filter((row) => row.organizationId === attacker.organizationId)
        .sort((x, y) => x.sequence - y.sequence)
      expect(attackers.slice(-13).every((row) => row.waitingFor === endpointId)).toBe(true)
    } finally {
      sampling = false
      await a.service.close()
      await b.service.close()
    }
  })
})
