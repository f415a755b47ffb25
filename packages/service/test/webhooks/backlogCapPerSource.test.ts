// The operator's (parent organization's) endpoint gets every sub-organization's events, and its
// backlog cap is one pool for all of them. While the operator's receiver is down (the endpoint
// paused by the service: it still gets every event), one end user making `cap` cheap events
// (create_wallet) must not drop the other sub-organizations' waiting deliveries: a full backlog
// drops the oldest of the source holding the most (the new event's own when it ties), so a flood
// drops its own. Before, the oldest went first, whoever's: the end user picked what the operator lost.
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { BACKLOG_FULL } from '../../src/webhooks/capBacklog.ts'

const CAP = 5
const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

/** The operator's endpoint, its receiver down: paused after one failed try of its own wallet's event. */
async function operatorEndpointDown() {
  const h = await createHarness({
    webhooks: {
      transport: async () => ({ status: 503, body: '' }),
      pauseThreshold: 1,
      maxWaitingPerEndpoint: CAP,
    },
    jobs: { pollMs: 3_600_000 },
  })
  harnesses.push(h)
  const { endpointId } = resultOf(
    'create_webhook_endpoint',
    await h.submit('create_webhook_endpoint', {
      url: 'http://127.0.0.1:9/hook',
      name: 'operator',
      subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
    }),
  ) as { endpointId: string }
  h.clock.advance(1)
  expect((await h.submit('create_wallet', { walletName: 'operator', accounts: [] })).status).toBe(200)
  for (let i = 0; i < 5; i++) {
    await h.service.runtime.jobs.runDue()
    await h.service.runtime.jobs.idle()
  }
  const listed = (await h.query('list_webhook_endpoints', {})).body as {
    webhookEndpoints: { pausedAtMs?: string }[]
  }
  expect(listed.webhookEndpoints[0]?.pausedAtMs).toBeDefined()
  const user = async () => {
    const key = testKey()
    const { organizationId } = await h.createSubOrganization({ keys: [key] })
    return { organizationId, as: key }
  }
  const wallet = async (name: string, as?: Awaited<ReturnType<typeof user>>) => {
    h.clock.advance(1)
    expect((await h.submit('create_wallet', { walletName: name, accounts: [] }, as)).status).toBe(200)
  }
  // Fans out (a listing fans out what was recorded first), then the endpoint's deliveries by source.
  const bySource = async () => {
    expect((await h.query('latchkey_list_webhook_deliveries', { endpointId })).status).toBe(200)
    const rows = (await h.service.store.findBy('webhookDeliveries', 'endpointId', endpointId)).sort(
      (x, y) => x.sequence - y.sequence,
    )
    return (organizationId: string) =>
      rows
        .filter((row) => row.organizationId === organizationId)
        .map((row) =>
          row.waitingFor === endpointId ? 'waits' : row.lastError === BACKLOG_FULL ? 'dropped' : row.state,
        )
  }
  return { h, user, wallet, bySource }
}

describe("the operator's endpoint, off, and its sub-organizations' events", () => {
  it("one end user's events do not drop another sub-organization's waiting delivery", async () => {
    const { h, user, wallet, bySource } = await operatorEndpointDown()
    const victim = await user()
    const attacker = await user()
    await wallet('victim', victim)
    for (let i = 0; i < CAP; i++) await wallet(`a${i}`, attacker)
    const of = await bySource()
    // The victim's one delivery still waits, as does the operator's own; the attacker's oldest two went.
    expect(of(victim.organizationId)).toEqual(['waits'])
    expect(of(h.organizationId)).toEqual(['waits'])
    expect(of(attacker.organizationId)).toEqual(['dropped', 'dropped', 'waits', 'waits', 'waits'])
  }, 60_000)

  it('a backlog one end user filled makes room for the others from its own', async () => {
    const { h, user, wallet, bySource } = await operatorEndpointDown()
    const attacker = await user()
    const victims = [await user(), await user()]
    // The attacker fills the backlog behind the operator's one delivery (its 5th drops its 1st).
    for (let i = 0; i < CAP; i++) await wallet(`a${i}`, attacker)
    await bySource()
    // Each newcomer drops the attacker's oldest (it holds the most), as does its own next one.
    for (const [v, victim] of victims.entries()) {
      await wallet(`v${v}`, victim)
      await bySource()
    }
    await wallet('a5', attacker)
    const of = await bySource()
    for (const victim of victims) expect(of(victim.organizationId)).toEqual(['waits'])
    expect(of(h.organizationId)).toEqual(['waits'])
    expect(of(attacker.organizationId)).toEqual([
      'dropped',
      'dropped',
      'dropped',
      'dropped',
      'waits',
      'waits',
    ])
  }, 60_000)
})
