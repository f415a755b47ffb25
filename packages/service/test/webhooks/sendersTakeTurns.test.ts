// The process's webhook senders (4, `WEBHOOK_SENDERS`) are shared by every tenant. A run sends at
// most `TURN_TRIES` tries of an endpoint's queue, then puts the endpoint's turn back at the end of
// the job queue, so another tenant's delivery waits behind a turn of each sender, not behind one
// tenant's whole backlog. Before, a run kept its sender for a whole drain (up to 20 s): an end user
// with 4 endpoints at receivers answering in 400 ms had another tenant's delivery wait ~15 s, behind
// 146-155 of theirs. Counted, not timed: the attacker's deliveries answered between the victim's
// event and the victim's delivery.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { TURN_TRIES, WEBHOOK_SENDERS } from '../../src/webhooks/deliver.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'

const servers: Server[] = []
const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  }
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A receiver that hands each request's body to `onRequest`, which answers 200 when it likes. */
async function receiver(onRequest: (body: string, respond: () => void) => void): Promise<string> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () =>
      onRequest(Buffer.concat(chunks).toString(), () => response.writeHead(200).end('ok')),
    )
  })
  servers.push(server)
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
}

type As = { organizationId: string; as: ReturnType<typeof testKey> }

async function setUp() {
  const h = await createHarness({
    webhooks: { transport: nodeWebhookTransport(), busyDelayMs: 0 },
    jobs: { pollMs: 20 },
  })
  harnesses.push(h)
  const endUser = async (): Promise<As> => {
    const key = testKey()
    const { organizationId } = await h.createSubOrganization({ keys: [key] })
    return { organizationId, as: key }
  }
  const endpoint = async (as: As, url: string, name: string) => {
    h.clock.advance(1)
    resultOf(
      'create_webhook_endpoint',
      await h.submit(
        'create_webhook_endpoint',
        { url, name, subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }] },
        as,
      ),
    )
  }
  const wallets = async (as: As, count: number, prefix: string) => {
    for (let i = 0; i < count; i++) {
      h.clock.advance(1)
      expect(
        (await h.submit('create_wallet', { walletName: `${prefix}${i}`, accounts: [] }, as)).status,
      ).toBe(200)
    }
  }
  return { h, endUser, endpoint, wallets }
}

describe('webhook senders shared by tenants', () => {
  it("another tenant's delivery waits behind a turn of each sender, not a tenant's whole backlog", async () => {
    const SLOW_MS = 100
    const EVENTS = 40
    const log: string[] = []
    // The clock moves with the attacker's deliveries, as a real one would.
    let tick: () => void = () => undefined
    const slowUrls: string[] = []
    for (let i = 0; i < WEBHOOK_SENDERS; i++)
      slowUrls.push(
        await receiver((_body, respond) =>
          setTimeout(() => {
            log.push('attacker')
            tick()
            respond()
          }, SLOW_MS),
        ),
      )
    // Only deliveries after the victim's event count (its own endpoint's creation is an event too).
    const fastUrl = await receiver((_body, respond) => {
      if (log.includes('victim-event')) log.push('victim')
      respond()
    })
    const { h, endUser, endpoint, wallets } = await setUp()
    tick = () => h.clock.advance(1)

    // The attacker: an ordinary end user (root of its own sub-organization), 4 endpoints (of 10),
    // at receivers that answer 200 (slowly, well inside the try timeout: nothing fails or pauses).
    const attacker = await endUser()
    for (const [i, url] of slowUrls.entries()) await endpoint(attacker, url, `slow${i}`)
    // The victim: another end user with one endpoint at a receiver that answers at once.
    const victim = await endUser()
    await endpoint(victim, fastUrl, 'fast')

    // Cheap activities of the attacker's: EVENTS deliveries queued at each endpoint.
    await wallets(attacker, EVENTS, 'w')
    // Every sender busy with the attacker's receivers.
    const deadline = Date.now() + 5000
    while (log.filter((entry) => entry === 'attacker').length < 2 * WEBHOOK_SENDERS && Date.now() < deadline)
      await sleep(10)

    await wallets(victim, 1, 'v')
    log.push('victim-event')
    // Until the victim's delivery, or every one of the attacker's (its whole backlog: ~4 s).
    const queued = WEBHOOK_SENDERS * EVENTS
    const until = Date.now() + 8000
    while (
      !log.includes('victim') &&
      log.filter((entry) => entry === 'attacker').length < queued &&
      Date.now() < until
    )
      await sleep(10)
    while (!log.includes('victim') && Date.now() < until) await sleep(10)
    const from = log.indexOf('victim-event')
    const to = log.includes('victim') ? log.indexOf('victim') : log.length
    const behind = log.slice(from, to).filter((entry) => entry === 'attacker').length
    expect(log).toContain('victim') // control: it is delivered
    // Control: the attacker's backlog was still long when the victim's event came.
    const sentBefore = log.slice(0, from).filter((entry) => entry === 'attacker').length
    expect(queued - sentBefore).toBeGreaterThan(4 * (TURN_TRIES + 1) * WEBHOOK_SENDERS)
    // A turn of each sender (and the tries under way as the victim's is sent), whatever the
    // attacker's backlog: before, 146-155 of the attacker's deliveries went first.
    expect(behind).toBeLessThanOrEqual((TURN_TRIES + 1) * WEBHOOK_SENDERS)
  }, 20_000)

  it('a busy endpoint still drains its whole queue, in order, a turn at a time', async () => {
    const EVENTS = 5 * TURN_TRIES
    const sequences: number[] = []
    const url = await receiver((body, respond) => {
      sequences.push((JSON.parse(body) as { sequence: number }).sequence)
      respond()
    })
    const { endUser, endpoint, wallets } = await setUp()
    const tenant = await endUser()
    await endpoint(tenant, url, 'busy')
    await wallets(tenant, EVENTS, 'w')
    const until = Date.now() + 5000
    // The endpoint's creation, then one a wallet.
    while (sequences.length < EVENTS + 1 && Date.now() < until) await sleep(10)
    expect(sequences).toEqual(Array.from({ length: EVENTS + 1 }, (_, i) => i + 1))
  }, 20_000)
})
