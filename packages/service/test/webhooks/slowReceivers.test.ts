// One tenant's slow webhook receivers cannot hold every run slot of the service's shared job
// queue: its senders run at most 4 at once (`WEBHOOK_SENDERS`), so another user's one-time code
// goes out at the next poll. With 8 endpoints answering in 2 s, a code once waited 14 s (without
// bound as tenants add endpoints).
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

describe('a tenant with slow webhook receivers', () => {
  it("does not delay another user's one-time code (the job queue is shared)", async () => {
    // The attacker's receiver: answers 200, slowly (well inside the 10 s try timeout), so nothing
    // fails, nothing backs off and nothing is paused.
    const SLOW_MS = 2000
    let inFlight = 0
    const slowUrls: string[] = []
    for (let i = 0; i < 8; i++) {
      const slow = createServer((request, response) => {
        inFlight++
        request.resume()
        setTimeout(() => {
          inFlight--
          response.writeHead(200).end('ok')
        }, SLOW_MS)
      })
      servers.push(slow)
      await new Promise<void>((done) => slow.listen(0, '127.0.0.1', done))
      slowUrls.push(`http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`)
    }

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

    // The attacker: the root user of an ordinary sub-organization (anyone who signs up is one),
    // with 8 endpoints (under the 10 allowed) at its slow receivers.
    const key = testKey()
    const sub = await h.createSubOrganization({ keys: [key] })
    const as = { organizationId: sub.organizationId, as: key }
    for (let i = 0; i < 8; i++) {
      h.clock.advance(1)
      resultOf(
        'create_webhook_endpoint',
        await h.submit(
          'create_webhook_endpoint',
          { url: slowUrls[i], name: `slow${i}`, subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }] },
          as,
        ),
      )
    }
    // A few cheap activities of its own: each is one event per endpoint.
    for (let i = 0; i < 6; i++) {
      h.clock.advance(1)
      expect((await h.submit('create_wallet', { walletName: `w${i}`, accounts: [] }, as)).status).toBe(200)
    }
    // Wait until the job worker sends to as many endpoints at once as it will: 4 of the 8.
    const deadline = Date.now() + 10_000
    while (inFlight < WEBHOOK_SENDERS && Date.now() < deadline) await sleep(20)
    await sleep(200)
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
    const waitUntil = Date.now() + 30_000
    while (mails.length === 0 && Date.now() < waitUntil) await sleep(20)
    const delayMs = (mails[0]?.at ?? Date.now()) - asked
    // With the service otherwise idle, a code goes out at the next poll (20 ms here). Secure
    // behaviour: a tenant's receivers cannot hold it back for seconds.
    expect(delayMs, `the victim's code was sent ${delayMs} ms after it was asked for`).toBeLessThan(3000)
  }, 60_000)
})
