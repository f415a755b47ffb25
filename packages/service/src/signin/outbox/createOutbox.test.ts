import { describe, expect, it } from 'vitest'
import type { OtpMessage } from '../otp/createOtpEngine.ts'
import { createOutbox, outboxRoutes } from './createOutbox.ts'

const message = (
  n: number,
  contact: string,
  otpType: OtpMessage['otpType'] = 'OTP_TYPE_EMAIL',
): OtpMessage => ({
  otpId: `otp-${n}`,
  organizationId: 'org',
  otpType,
  contact,
  code: `12345${n}`,
  subject: otpType === 'OTP_TYPE_EMAIL' ? 'Your code' : '',
  body: `Code 12345${n} <b>`,
  sentAt: `2026-01-01T00:00:0${n}.000Z`,
})

describe('outbox', () => {
  const outbox = createOutbox({ limit: 3 })
  const app = outboxRoutes(outbox)
  outbox.deliver(message(1, 'ada@example.com'))
  outbox.deliver(message(2, '+14155550123', 'OTP_TYPE_SMS'))
  outbox.deliver(message(3, 'ada@example.com'))

  it('answers JSON, newest first, without the organization id', async () => {
    const res = await app.request('/outbox', { headers: { Accept: 'application/json' } })
    expect(res.headers.get('content-type')).toContain('application/json')
    // No blanket CORS grant: the service's guard grants allowed origins one by one.
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    const { organizationId: _, ...third } = message(3, 'ada@example.com')
    const body = (await res.json()) as { messages: unknown[] }
    expect(body.messages).toHaveLength(3)
    expect(body.messages[0]).toEqual(third)
    expect((await (await app.request('/outbox')).json()).messages).toHaveLength(3)
    expect((await (await app.request('/outbox.json')).json()).messages).toHaveLength(3)
  })

  it('filters by contact, case-insensitively', async () => {
    const res = await app.request('/outbox?contact=ADA@example.com')
    const body = (await res.json()) as { messages: { otpId: string }[] }
    expect(body.messages.map((m) => m.otpId)).toEqual(['otp-3', 'otp-1'])
  })

  it('renders an escaped HTML page for a browser', async () => {
    const res = await app.request('/outbox', {
      headers: { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    })
    expect(res.headers.get('content-type')).toContain('text/html')
    const html = await res.text()
    expect(html).toContain('<html lang="en">')
    expect(html).toContain('<output>123452</output>')
    expect(html).toContain('SMS to +14155550123')
    expect(html).toContain('Code 123451 &lt;b&gt;')
    expect(html).not.toContain('<b>')
  })

  it('keeps only the newest messages up to its limit, and can be emptied', async () => {
    outbox.deliver(message(4, 'bob@example.com'))
    expect(outbox.list().map((m) => m.otpId)).toEqual(['otp-4', 'otp-3', 'otp-2'])
    await app.request('/outbox', { method: 'DELETE' })
    expect(outbox.list()).toEqual([])
  })
})
