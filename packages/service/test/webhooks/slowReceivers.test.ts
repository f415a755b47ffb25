// Tenants' slow webhook receivers cannot hold back the service's shared job queue: their senders
// run at most 4 at once (`WEBHOOK_SENDERS`), so another user's one-time code goes out at the next
// poll. With 8 endpoints answering in 2 s, a code once waited 14 s (without bound as tenants add
// endpoints); and with 2 tenants' 20 endpoints, once every sender's turn was queued, the queue's
// read of due jobs found only senders it could not start (`duePending` counted them), and the
// code waited 9 s behind all their turns (hours, with a hundred sign-ups).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { afterEach, describe, expect, it } from 'vitest'
import type { MailMessage } from '../../src/delivery/DeliveryOptions.ts'
import { createHarness, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { WEBHOOK_SENDERS } from '../../src/webhooks/deliver.ts'
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

/**
 * `tenants` ordinary sub-organizations (anyone who signs up is one), each with `endpoints` webhook
 * endpoints at a receiver that answers 200 in `slowMs` (well inside the 10 s try timeout, so
 * nothing fails, backs off or pauses), each making `activities` cheap activities (an event per
 * endpoint); once the senders are as busy as they get (and, after `runMs`, every endpoint's turn
 * may be queued), a victim asks for a sign-in code. Answers
 * how long after the ask the code went out.
 */
async function codeDelayBehind(options: {
  tenants: number
  endpoints: number
  activities: number
  slowMs: number
  /** How long the senders run before the victim asks. */
  runMs: number
}) {
  let inFlight = 0
  const slow = createServer((request, response) => {
    inFlight++
    request.resume()
    setTimeout(() => {
      inFlight--
      response.writeHead(200).end('ok')
    }, options.slowMs)
  })
  servers.push(slow)
  await new Promise<void>((done) => slow.listen(0, '127.0.0.1', done))
  const base = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`

  // Codes are delivered by a real provider (the mailer records when each code went out).
  const mails: { at: number; message: MailMessage }[] = []
  const h = await createHarness({
    webhooks: { transport: nodeWebhookTransport(), busyDelayMs: 0 },
    delivery: {
      email: { host: '127.0.0.1', port: 2525, tls: 'none', from: 'Acme <codes@acme.test>' },
      mailer: () => ({
        send: async (message) => {
          mails.push({ at: Date.now(), message })
        },
        close: () => undefined,
      }),
    },
    jobs: { pollMs: 20 },
  })
  harnesses.push(h)

  const tenants = []
  for (let t = 0; t < options.tenants; t++) {
    const key = testKey()
    const sub = await h.createSubOrganization({ keys: [key] })
    const as = { organizationId: sub.organizationId, as: key }
    tenants.push(as)
    for (let i = 0; i < options.endpoints; i++) {
      h.clock.advance(1)
      resultOf(
        'create_webhook_endpoint',
        await h.submit(
          'create_webhook_endpoint',
          {
            url: `${base}/t${t}/e${i}`,
            name: `slow${i}`,
            subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }],
          },
          as,
        ),
      )
    }
  }
  for (let i = 0; i < options.activities; i++)
    for (const as of tenants) {
      h.clock.advance(1)
      expect((await h.submit('create_wallet', { walletName: `w${i}`, accounts: [] }, as)).status).toBe(200)
    }
  // Wait until the job worker sends to as many endpoints at once as it will, and `runMs` more;
  // then until all 4 senders are busy again.
  const deadline = Date.now() + 10_000
  while (inFlight < WEBHOOK_SENDERS && Date.now() < deadline) await sleep(20)
  await sleep(options.runMs)
  const busyBy = Date.now() + 5000
  while (inFlight < WEBHOOK_SENDERS && Date.now() < busyBy) await sleep(5)
  expect(inFlight).toBe(WEBHOOK_SENDERS)

  // A victim (any organization's user) asks for a sign-in code.
  const asked = Date.now()
  const init = await h.service.app.request('/v1/otp_init', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
    },
    body: JSON.stringify({ otpType: 'OTP_TYPE_EMAIL', contact: 'victim@example.com' }),
  })
  expect(init.status).toBe(200)
  const waitUntil = Date.now() + 40_000
  while (mails.length === 0 && Date.now() < waitUntil) await sleep(20)
  return (mails[0]?.at ?? Date.now()) - asked
}

// With the service otherwise idle, a code goes out at the next poll (20 ms here). Secure
// behaviour: tenants' receivers cannot hold it back for seconds.
describe('tenants with slow webhook receivers', () => {
  it("do not delay another user's one-time code (the job queue is shared): one tenant, 8 endpoints", async () => {
    const delayMs = await codeDelayBehind({
      tenants: 1,
      endpoints: 8,
      activities: 6,
      slowMs: 2000,
      runMs: 200,
    })
    expect(delayMs, `the victim's code was sent ${delayMs} ms after it was asked for`).toBeLessThan(3000)
  }, 60_000)

  it("do not delay another user's one-time code once every sender's turn is queued: two tenants, 10 endpoints each", async () => {
    const delayMs = await codeDelayBehind({
      tenants: 2,
      endpoints: 10,
      activities: 12,
      slowMs: 500,
      runMs: 1200,
    })
    expect(delayMs, `the victim's code was sent ${delayMs} ms after it was asked for`).toBeLessThan(3000)
  }, 60_000)
})
