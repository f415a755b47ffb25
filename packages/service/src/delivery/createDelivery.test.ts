import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { codeIn, type SmtpMailbox, startSmtpMailbox } from '../../test/delivery/smtpMailbox.ts'
import { type CreateServiceOptions, createService, type Service } from '../assembly/createService.ts'
import type { ServiceEventMap, ServiceEventName } from '../kernel/base/events.ts'
import { openMemoryStore } from '../kernel/store/memory.ts'
import type { DeliveryOptions } from './DeliveryOptions.ts'
import { webhookSignature } from './smsSender.ts'
import { smtpMailer } from './smtpMailer.ts'

/**
 * Delivery with real parts: an SMTP server on loopback (codes are read from its mailbox and then
 * verified), and HTTP endpoints in Twilio's shape and the signed webhook's.
 */
type Event = { [K in ServiceEventName]: [K, ServiceEventMap[K]] }[ServiceEventName]

let mailbox: SmtpMailbox
const services: Service[] = []

beforeAll(async () => {
  mailbox = await startSmtpMailbox({ auth: { user: 'latchkey', password: 'smtp-secret-pw' } })
})

afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()))
  mailbox.mails.length = 0
  mailbox.attempts.length = 0
  mailbox.mode = 'accept'
})

afterAll(async () => {
  await mailbox.close()
})

const email = (port: number, templates?: NonNullable<DeliveryOptions['email']>['templates']) => ({
  host: '127.0.0.1',
  port,
  tls: 'none' as const,
  user: 'latchkey',
  password: 'smtp-secret-pw',
  from: 'Acme <codes@acme.test>',
  ...(templates ? { templates } : {}),
})

async function start(delivery: DeliveryOptions, options: CreateServiceOptions = {}) {
  const events: Event[] = []
  const service = await createService({
    delivery: { mailer: smtpMailer, timeoutMs: 2000, ...delivery },
    jobs: { pollMs: 10, backoff: { baseMs: 20, maxMs: 80 } },
    events: { emit: (name, data) => events.push([name, data] as Event) },
    proxySettings: { appName: 'Acme & Co' },
    ...options,
  })
  services.push(service)
  return { service, events }
}

async function proxy(service: Service, path: string, body: unknown) {
  const response = await service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', [PROXY_CONFIG_HEADER]: service.dev.authProxyConfigId! },
    body: JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

async function verify(service: Service, otpId: unknown, otpCode: string) {
  return proxy(service, 'otp_verify', { otpId, otpCode })
}

/** Waits until `done()` holds (the worker runs on its own). */
async function until(done: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('e-mail over SMTP', () => {
  it('sends the operator template with the app name and lifetime; the mailed code verifies', async () => {
    const { service, events } = await start({
      email: email(mailbox.port, {
        subject: '{{ app_name }} code',
        text: 'Code {{code}} for {{app_name}}, valid {{expires_minutes}} minutes.',
        html: '<p>Code <b>{{code}}</b> for {{app_name}}</p>',
      }),
    })
    const init = await proxy(service, 'otp_init', {
      otpType: 'OTP_TYPE_EMAIL',
      contact: 'Ada@Example.com',
    })
    expect(init.status).toBe(200)
    const [mail] = await mailbox.waitFor(1)
    // A channel with a provider never writes the code to the dev outbox.
    const outbox = await service.app.request('/dev/outbox.json')
    expect(await outbox.json()).toEqual({ messages: [] })
    const code = codeIn(mail!.text)
    expect(mail).toEqual({
      from: '"Acme" <codes@acme.test>',
      to: 'ada@example.com',
      subject: 'Acme & Co code',
      text: `Code ${code} for Acme & Co, valid 5 minutes.`,
      html: `<p>Code <b>${code}</b> for Acme &amp; Co</p>`,
      messageId: `<otp:${init.body.otpId}@latchkey.delivery>`,
    })
    expect((await verify(service, init.body.otpId, code)).status).toBe(200)
    await until(async () => (await service.store.get('jobs', `otp:${init.body.otpId}`)) === undefined)
    expect(events).toContainEqual(['delivery.sent', { channel: 'email', provider: 'smtp', attempt: 1 }])
  })

  it('uses the proxy settings rendering when the operator set no template', async () => {
    const { service } = await start({ email: email(mailbox.port) })
    const init = await proxy(service, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'bo@example.com' })
    const [mail] = await mailbox.waitFor(1)
    expect(mail!.subject).toBe('Your Acme & Co sign-in code')
    expect(mail!.text).toContain('It expires in 5 minutes.')
    expect(mail!.html).toBeUndefined()
    expect((await verify(service, init.body.otpId, codeIn(mail!.text))).status).toBe(200)
  })

  it.each([
    [451 as const, 'smtp_4xx', 3],
    [550 as const, 'smtp_5xx', 1],
  ])(
    'SMTP answering %s: %s, tried %s time(s), then a visible failure; the OTP record stays',
    async (mode, reason, tries) => {
      mailbox.mode = mode
      const { service, events } = await start({ email: email(mailbox.port), maxAttempts: 3 })
      const init = await proxy(service, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'cy@example.com' })
      expect(init.status).toBe(200)
      const id = `otp:${init.body.otpId}`
      await until(async () => (await service.store.get('jobs', id))?.state === 'failed')
      expect(await service.store.get('jobs', id)).toMatchObject({ attempts: tries, lastError: reason })
      expect(mailbox.attempts).toEqual(Array(tries).fill('cy@example.com'))
      expect(mailbox.mails).toEqual([])
      expect(events.filter(([name]) => name.startsWith('job.') || name.startsWith('delivery.'))).toEqual([
        ...Array.from({ length: tries }, (_, i) => [
          ['delivery.failed', { channel: 'email', provider: 'smtp', reason, attempt: i + 1 }],
          i + 1 < tries
            ? ['job.retry', { kind: 'otp.deliver', attempts: i + 1, reason }]
            : ['job.failed', { kind: 'otp.deliver', attempts: i + 1, reason }],
        ]).flat(),
      ])
      expect(JSON.stringify(events)).not.toContain('cy@example.com')
      const record = await service.store.get('pluginRows', `otp:${init.body.otpId}`)
      expect(record?.data).toMatchObject({ status: 'pending', contact: 'cy@example.com', attempts: 0 })
    },
  )

  it('SMTP down: bounded retries, then failed with a connection reason', async () => {
    const closed = await startSmtpMailbox()
    const port = closed.port
    await closed.close()
    const { service, events } = await start({ email: email(port), maxAttempts: 2 })
    const init = await proxy(service, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'di@example.com' })
    const id = `otp:${init.body.otpId}`
    await until(async () => (await service.store.get('jobs', id))?.state === 'failed')
    expect(await service.store.get('jobs', id)).toMatchObject({ attempts: 2, lastError: 'smtp_connection' })
    expect(events.at(-1)).toEqual([
      'job.failed',
      { kind: 'otp.deliver', attempts: 2, reason: 'smtp_connection' },
    ])
  })

  it('refuses a template with an unknown placeholder, naming it, before the store is written', async () => {
    const store = await openMemoryStore()
    await expect(
      createService({
        store,
        delivery: { mailer: smtpMailer, email: email(mailbox.port, { subject: 'Hi {{ user }}' }) },
      }),
    ).rejects.toThrow(
      'email.templates.subject: unknown placeholder {{user}}; allowed: {{code}}, {{app_name}}, {{expires_minutes}}',
    )
    await expect(createService({ store, delivery: { email: email(mailbox.port) } })).rejects.toThrow(
      'delivery.email needs a mailer',
    )
    expect([await store.all('service'), await store.all('keyring')]).toEqual([[], []])
  })

  it('leaves a channel without a provider to the dev outbox', async () => {
    const { service } = await start({ email: email(mailbox.port) })
    const init = await proxy(service, 'otp_init', { otpType: 'OTP_TYPE_SMS', contact: '+14155550100' })
    expect(init.status).toBe(200)
    const outbox = await service.app.request('/dev/outbox.json')
    const { messages } = (await outbox.json()) as { messages: { otpId: string }[] }
    expect(messages.map((m) => m.otpId)).toEqual([init.body.otpId])
    expect(await service.store.all('jobs')).toEqual([])
  })
})

/** A loopback HTTP endpoint that records requests and answers with `status()`. */
async function endpoint(status: (request: number) => number | Promise<number>) {
  const requests: { url: string; headers: IncomingMessage['headers']; body: string }[] = []
  const server: Server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => {
      body += chunk
    })
    request.on('end', async () => {
      requests.push({ url: request.url ?? '', headers: request.headers, body })
      const code = await status(requests.length)
      response.writeHead(code, { 'Content-Type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describe('SMS', () => {
  it("sends through Twilio's Messages API shape with basic auth and an idempotency token", async () => {
    const twilio = await endpoint((n) => (n === 1 ? 503 : 201))
    try {
      const { service, events } = await start({
        sms: {
          provider: 'twilio',
          accountSid: 'AC123',
          authToken: 'twilio-token',
          from: '+15005550006',
          baseUrl: twilio.url,
          template: '{{code}}: {{app_name}} ({{expires_minutes}} min)',
        },
      })
      const init = await proxy(service, 'otp_init', { otpType: 'OTP_TYPE_SMS', contact: '+14155550101' })
      await until(() => twilio.requests.length === 2)
      await until(async () => (await service.store.get('jobs', `otp:${init.body.otpId}`)) === undefined)
      const [first, second] = twilio.requests
      expect(second!.url).toBe('/2010-04-01/Accounts/AC123/Messages.json')
      expect(second!.headers.authorization).toBe(`Basic ${btoa('AC123:twilio-token')}`)
      expect(second!.headers['content-type']).toBe('application/x-www-form-urlencoded')
      // The retry after the 503 carries the same token: Twilio sends one message for both.
      expect(second!.headers['i-twilio-idempotency-token']).toBe(`otp:${init.body.otpId}`)
      expect(first!.headers['i-twilio-idempotency-token']).toBe(`otp:${init.body.otpId}`)
      const form = new URLSearchParams(second!.body)
      const code = codeIn(form.get('Body')!)
      expect(Object.fromEntries(form)).toEqual({
        To: '+14155550101',
        From: '+15005550006',
        Body: `${code}: Acme & Co (5 min)`,
      })
      expect((await verify(service, init.body.otpId, code)).status).toBe(200)
      expect(events).toContainEqual([
        'delivery.failed',
        { channel: 'sms', provider: 'twilio', reason: 'twilio_5xx', attempt: 1 },
      ])
      expect(events).toContainEqual(['delivery.sent', { channel: 'sms', provider: 'twilio', attempt: 2 }])
    } finally {
      await twilio.close()
    }
  })

  it('sends through the webhook, signed with an HMAC the receiver can check', async () => {
    const hook = await endpoint(() => 200)
    try {
      const { service } = await start({
        sms: { provider: 'webhook', url: `${hook.url}/sms`, secret: 'hook-secret' },
      })
      const init = await proxy(service, 'otp_init', { otpType: 'OTP_TYPE_SMS', contact: '+14155550102' })
      await until(() => hook.requests.length === 1)
      const [request] = hook.requests
      const timestamp = request!.headers['x-latchkey-timestamp'] as string
      expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60)
      expect(request!.headers['x-latchkey-signature']).toBe(
        `sha256=${webhookSignature('hook-secret', timestamp, request!.body)}`,
      )
      // Anyone without the secret computes another signature.
      expect(request!.headers['x-latchkey-signature']).not.toBe(
        `sha256=${webhookSignature('other-secret', timestamp, request!.body)}`,
      )
      expect(request!.headers['x-latchkey-delivery-id']).toBe(`otp:${init.body.otpId}`)
      const body = JSON.parse(request!.body) as { id: string; to: string; body: string }
      expect(body).toEqual({
        id: `otp:${init.body.otpId}`,
        to: '+14155550102',
        body: expect.stringContaining('is your Acme & Co sign-in code. It expires in 5 minutes.'),
      })
      expect((await verify(service, init.body.otpId, codeIn(body.body))).status).toBe(200)
    } finally {
      await hook.close()
    }
  })

  it('a refused message (4xx) fails at once; nothing in the events names the number', async () => {
    const hook = await endpoint(() => 400)
    try {
      const { service, events } = await start({
        sms: { provider: 'webhook', url: hook.url, secret: 'hook-secret' },
      })
      const init = await proxy(service, 'otp_init', { otpType: 'OTP_TYPE_SMS', contact: '+14155550103' })
      const id = `otp:${init.body.otpId}`
      await until(async () => (await service.store.get('jobs', id))?.state === 'failed')
      expect(await service.store.get('jobs', id)).toMatchObject({ attempts: 1, lastError: 'webhook_4xx' })
      expect(JSON.stringify(events)).not.toContain('4155550103')
    } finally {
      await hook.close()
    }
  })
})
