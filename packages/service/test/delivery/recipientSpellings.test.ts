// One inbox, one send budget, whatever the contact's spelling. The budget (SEND_LIMIT: 3 a minute,
// 5 in ten minutes) is keyed on the contact, and nodemailer reads a `to` as an address list: a
// contact such as `n1<victim@example.com>` (a display name), `x,victim@example.com` (a list),
// `victim@example.com(x)` (a comment) or `x:victim@example.com;` (a group) was a budget of its own
// and was delivered to victim@example.com, so anyone could flood any inbox through the operator's
// SMTP server. Now only a plain address is a contact, and the mailer sends to exactly the one
// address it is given, or to none.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createService, type Service } from '../../src/assembly/createService.ts'
import { createDelivery } from '../../src/delivery/createDelivery.ts'
import type { MailMessage } from '../../src/delivery/DeliveryOptions.ts'
import { smtpMailer } from '../../src/delivery/smtpMailer.ts'
import { PermanentJobError } from '../../src/kernel/JobQueue.ts'
import { type SmtpMailbox, startSmtpMailbox } from './smtpMailbox.ts'

const VICTIM = 'victim@example.com'
const SPELLINGS = [`n1<${VICTIM}>`, `"Bo" <${VICTIM}>`, `x,${VICTIM}`, `${VICTIM}(x)`, `x:${VICTIM};`]
const EMAIL = { host: '127.0.0.1', tls: 'none' as const, from: 'Acme <codes@acme.test>' }

let mailbox: SmtpMailbox
let service: Service

beforeAll(async () => {
  mailbox = await startSmtpMailbox()
  service = await createService({
    delivery: { mailer: smtpMailer, timeoutMs: 2000, email: { ...EMAIL, port: mailbox.port } },
    jobs: { pollMs: 10, backoff: { baseMs: 20, maxMs: 80 } },
  })
}, 60_000)

afterAll(async () => {
  await service?.close()
  await mailbox?.close()
})

async function otpInit(contact: string) {
  const response = await service.app.request('/v1/otp_init', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', [PROXY_CONFIG_HEADER]: service.dev.authProxyConfigId! },
    body: JSON.stringify({ otpType: 'OTP_TYPE_EMAIL', contact }),
  })
  const body = (await response.json()) as { details?: { errorCode?: string; field?: string } }
  return { status: response.status, errorCode: body.details?.errorCode, field: body.details?.field }
}

const to = (address: string) => mailbox.attempts.filter((attempt) => attempt === address).length

describe('the inbox an OTP e-mail reaches is the one its send budget counts', () => {
  it('control: a fourth code to the plain address within a minute is refused (429)', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) statuses.push((await otpInit(VICTIM)).status)
    expect(statuses).toEqual([200, 200, 200, 429])
    await mailbox.waitFor(3)
    expect(to(VICTIM)).toBe(3)
  }, 30_000)

  it('a display name, list, comment or group spelling of the address is refused (400), and nothing more reaches the inbox', async () => {
    const replies = []
    for (const spelling of SPELLINGS) replies.push(await otpInit(spelling))
    expect(replies).toEqual(
      SPELLINGS.map(() => ({ status: 400, errorCode: 'CONTACT_INVALID', field: 'parameters.contact' })),
    )
    // Another inbox's code, sent after them: once it arrived, nothing else was on its way.
    expect((await otpInit('other@example.com')).status).toBe(200)
    await mailbox.waitFor(4)
    expect({ victim: to(VICTIM), other: to('other@example.com') }).toEqual({ victim: 3, other: 1 })
  }, 30_000)
})

describe('the mailer sends to exactly the one address it is given', () => {
  const message = (recipient: string): MailMessage => ({
    from: EMAIL.from,
    to: recipient,
    subject: 'Code',
    text: 'Your code is 123456.',
    messageId: `<${crypto.randomUUID()}@latchkey.delivery>`,
  })
  beforeEach(() => {
    mailbox.mails.length = 0
    mailbox.attempts.length = 0
  })

  it('control: a plain address (plus-tag, subdomain) is the envelope and the To header alone', async () => {
    const mailer = smtpMailer({ ...EMAIL, port: mailbox.port, timeoutMs: 2000 })
    try {
      await mailer.send(message('ada+otp@mail.example.com'), new AbortController().signal)
    } finally {
      mailer.close()
    }
    const [mail] = await mailbox.waitFor(1)
    expect({ attempts: mailbox.attempts, to: mail!.to }).toEqual({
      attempts: ['ada+otp@mail.example.com'],
      to: 'ada+otp@mail.example.com',
    })
  })

  it.each(SPELLINGS)('smtpMailer refuses %s (EENVELOPE, final) before connecting', async (spelling) => {
    const mailer = smtpMailer({ ...EMAIL, port: mailbox.port, timeoutMs: 2000 })
    try {
      await expect(mailer.send(message(spelling), new AbortController().signal)).rejects.toMatchObject({
        code: 'EENVELOPE',
      })
    } finally {
      mailer.close()
    }
    expect(mailbox.attempts).toEqual([])
  })

  it('a code queued for such a contact (before the rule) fails for good without reaching the mailer', async () => {
    const sent: MailMessage[] = []
    const events: unknown[] = []
    const delivery = createDelivery(
      { email: { ...EMAIL, port: 25 }, mailer: () => ({ send: async (m) => void sent.push(m), close() {} }) },
      { events: { emit: (name, data) => events.push([name, data]) }, now: () => 0, fetch },
    )
    const run = (recipient: string) =>
      delivery.handler.run(
        {
          otpType: 'OTP_TYPE_EMAIL',
          to: recipient,
          code: '123456',
          appName: 'Acme',
          expiresInMinutes: 5,
          subject: 'Code',
          body: 'Your code is 123456.',
        },
        {
          jobId: 'otp:1',
          kind: 'otp.deliver',
          attempt: 1,
          uncertain: false,
          signal: new AbortController().signal,
        },
      )
    for (const spelling of SPELLINGS)
      await expect(run(spelling)).rejects.toEqual(new PermanentJobError('smtp_recipient'))
    await run(VICTIM)
    expect(sent.map((m) => m.to)).toEqual([VICTIM])
    expect(events).toContainEqual([
      'delivery.failed',
      { channel: 'email', provider: 'smtp', reason: 'smtp_recipient', attempt: 1 },
    ])
    expect(JSON.stringify(events)).not.toContain(VICTIM)
  })
})
