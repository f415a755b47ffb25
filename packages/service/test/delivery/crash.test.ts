// kill -9 of a service process around the delivery of a code, on a data dir (SQLite): a code
// committed but not sent is sent exactly once after the restart; a message possibly handed over
// before the crash is sent again only under the same idempotency key (the SMS webhook), never for
// e-mail (at most once), and both are counted.
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { removeDir, tempDir } from '../durability/tempDir.ts'
import { killDeliveryProcesses, startDeliveryService } from './deliveryProcess.ts'
import { codeIn, type SmtpMailbox, startSmtpMailbox } from './smtpMailbox.ts'

afterEach(killDeliveryProcesses)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(done: () => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await sleep(20)
  }
}

describe('kill -9 around a delivery', () => {
  let mailbox: SmtpMailbox
  const dirs: string[] = []
  beforeAll(async () => {
    mailbox = await startSmtpMailbox()
  })
  afterEach(() => {
    mailbox.mails.length = 0
    mailbox.attempts.length = 0
    mailbox.mode = 'accept'
  })
  afterAll(async () => {
    await mailbox.close()
    for (const dir of dirs) removeDir(dir)
  })

  const setup = () => {
    const dataDir = tempDir('delivery')
    dirs.push(dataDir)
    const masterKey = randomBytes(32).toString('hex')
    const email = { host: '127.0.0.1', port: mailbox.port, tls: 'none' as const, from: 'codes@acme.test' }
    return { dataDir, masterKey, email }
  }

  it('between the commit and the send: exactly one message after the restart', async () => {
    const { dataDir, masterKey, email } = setup()
    // This instance runs no jobs: the kill lands after the commit and before any send.
    const first = await startDeliveryService({
      dataDir,
      masterKey,
      delivery: { email },
      jobs: { concurrency: 0 },
    })
    const init = await first.proxy('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'kim@example.com' })
    expect(init.status).toBe(200)
    await sleep(300)
    expect(mailbox.mails).toEqual([])
    await first.crash()

    const second = await startDeliveryService({
      dataDir,
      masterKey,
      delivery: { email },
      jobs: { pollMs: 50 },
    })
    const [mail] = await mailbox.waitFor(1)
    expect(mail!.messageId).toBe(`<otp:${init.body.otpId}@latchkey.delivery>`)
    const verified = await second.proxy('otp_verify', { otpId: init.body.otpId, otpCode: codeIn(mail!.text) })
    expect(verified.status).toBe(200)
    await sleep(500)
    expect(mailbox.mails).toHaveLength(1)
    expect(second.events().filter(({ name }) => name === 'delivery.sent')).toEqual([
      { name: 'delivery.sent', data: { channel: 'email', provider: 'smtp', attempt: 1 } },
    ])
    await second.stop()
  }, 120_000)

  it('after handing an e-mail over: not sent again, counted as uncertain', async () => {
    const { dataDir, masterKey, email } = setup()
    mailbox.mode = 'stall'
    const jobs = { pollMs: 50, leaseMs: 1500 }
    const first = await startDeliveryService({
      dataDir,
      masterKey,
      delivery: { email, timeoutMs: 500 },
      jobs,
    })
    const init = await first.proxy('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'lee@example.com' })
    expect(init.status).toBe(200)
    await until(() => mailbox.attempts.length === 1)
    await first.crash()
    mailbox.mode = 'accept'

    const second = await startDeliveryService({
      dataDir,
      masterKey,
      delivery: { email, timeoutMs: 500 },
      jobs,
    })
    await until(() => second.events().some(({ name }) => name === 'job.failed'))
    expect(second.events()).toEqual([
      { name: 'job.reclaimed', data: { kind: 'otp.deliver' } },
      { name: 'delivery.uncertain', data: { channel: 'email', provider: 'smtp', resent: false } },
      { name: 'job.failed', data: { kind: 'otp.deliver', attempts: 2, reason: 'smtp_uncertain' } },
    ])
    expect(mailbox.attempts).toEqual(['lee@example.com'])
    await second.stop()
  }, 120_000)

  it('after handing an SMS to the webhook: sent again under the same delivery id, counted', async () => {
    const { dataDir, masterKey } = setup()
    const requests: IncomingHttpHeaders[] = []
    const held: ServerResponse[] = []
    let crashed = false
    const hook = createServer((request, response) => {
      request.resume()
      request.on('end', () => {
        requests.push(request.headers)
        // Taken and never answered while the first process lives: it dies holding the request.
        if (!crashed) held.push(response)
        else response.writeHead(200).end('{}')
      })
    })
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/sms`
      const delivery = { sms: { provider: 'webhook' as const, url, secret: 'hook-secret' }, timeoutMs: 500 }
      const jobs = { pollMs: 50, leaseMs: 4000 }
      const first = await startDeliveryService({ dataDir, masterKey, delivery, jobs })
      const init = await first.proxy('otp_init', { otpType: 'OTP_TYPE_SMS', contact: '+14155550199' })
      expect(init.status).toBe(200)
      await until(() => requests.length === 1)
      await first.crash()
      crashed = true
      const before = requests.length

      const second = await startDeliveryService({ dataDir, masterKey, delivery, jobs })
      await until(() => second.events().some(({ name }) => name === 'job.done'))
      // One more request after the restart, under the key of every earlier one.
      expect(requests).toHaveLength(before + 1)
      expect(new Set(requests.map((headers) => headers['x-latchkey-delivery-id']))).toEqual(
        new Set([`otp:${init.body.otpId}`]),
      )
      expect(second.events()).toEqual([
        { name: 'job.reclaimed', data: { kind: 'otp.deliver' } },
        { name: 'delivery.uncertain', data: { channel: 'sms', provider: 'webhook', resent: true } },
        { name: 'delivery.sent', data: { channel: 'sms', provider: 'webhook', attempt: before + 1 } },
        { name: 'job.done', data: { kind: 'otp.deliver', attempts: before + 1 } },
      ])
      await second.stop()
    } finally {
      for (const response of held) response.destroy()
      await new Promise<void>((resolve) => hook.close(() => resolve()))
    }
  }, 120_000)
})
