// Two service processes on one PostgreSQL database, each with delivery and a worker: 50 codes
// started concurrently over both are mailed exactly once each (one instance claims each job).
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../durability/postgres.ts'
import { RootClient } from '../support/RootClient.ts'
import { type DeliveryProcess, killDeliveryProcesses, startDeliveryService } from './deliveryProcess.ts'
import { codeIn, type SmtpMailbox, startSmtpMailbox } from './smtpMailbox.ts'

describe('delivery over two instances on PostgreSQL', () => {
  let cluster: PostgresCluster
  let mailbox: SmtpMailbox
  let instances: DeliveryProcess[] = []

  beforeAll(async () => {
    ;[cluster, mailbox] = await Promise.all([startPostgres(), startSmtpMailbox()])
    const masterKey = randomBytes(32).toString('hex')
    const email = { host: '127.0.0.1', port: mailbox.port, tls: 'none' as const, from: 'codes@acme.test' }
    instances = await Promise.all(
      ['A', 'B'].map(() =>
        startDeliveryService({
          databaseUrl: cluster.url,
          masterKey,
          delivery: { email },
          jobs: { pollMs: 50, concurrency: 8 },
        }),
      ),
    )
  }, 600_000)

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()))
    killDeliveryProcesses()
    await mailbox?.close()
    await cluster?.dispose()
  }, 60_000)

  it('50 concurrent codes over both instances: 50 messages, none twice, each code the one committed', async () => {
    const root = new RootClient(instances[0]!.info)
    const contacts = Array.from(
      { length: 50 },
      (_, i) => `user${i}-${randomBytes(3).toString('hex')}@example.com`,
    )
    // Stamped init_otp (what the proxy's otp_init submits), so the proxy's per-address budget
    // does not stand between one test client and 50 codes.
    const replies = await Promise.all(
      contacts.map((contact, i) =>
        root.submit(instances[i % 2]!, 'init_otp', { otpType: 'OTP_TYPE_EMAIL', contact }, 30_000),
      ),
    )
    const refused = replies.filter((reply) => reply.status !== 200)
    expect(refused.length, JSON.stringify(refused.map(({ status, body }) => ({ status, body })))).toBe(0)
    const otpIds = replies.map((reply) => reply.body.activity.result.initOtpResult.otpId as string)
    const mails = await mailbox.waitFor(50, 60_000)
    // The mailbox has a message before the service hears it was taken (and logs `delivery.sent`);
    // under load that can take a while. Wait until each message's send is logged and no
    // otp.deliver job is left in the database (a done job is deleted), so no run can start again.
    const sentBy = () =>
      instances.map((instance) => instance.events().filter(({ name }) => name === 'delivery.sent').length)
    const jobsLeft = () => Number(cluster.psql("select count(*) from jobs where kind = 'otp.deliver'"))
    for (const deadline = Date.now() + 60_000; sentBy()[0]! + sentBy()[1]! < 50 || jobsLeft() > 0; ) {
      if (Date.now() > deadline)
        throw new Error(`after 60 s: ${sentBy().join(' + ')} sends logged, ${jobsLeft()} jobs left`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    // Nothing more arrives: each job ran once (a second run of one would have been under way).
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect(mailbox.mails).toHaveLength(50)
    expect(new Set(mails.map((mail) => mail.messageId)).size).toBe(50)
    expect(mails.map((mail) => mail.to).sort()).toEqual([...contacts].sort())
    expect(new Set(mails.map((mail) => mail.messageId))).toEqual(
      new Set(otpIds.map((otpId) => `<otp:${otpId}@latchkey.delivery>`)),
    )
    // Between them the instances sent 50: no job ran on both.
    const sent = sentBy()
    expect(sent[0]! + sent[1]!).toBe(50)
    // A mailed code verifies on the other instance.
    const first = mails.find((mail) => mail.to === contacts[0])!
    const verified = await instances[1]!.proxy('otp_verify', {
      otpId: otpIds[0],
      otpCode: codeIn(first.text),
    })
    expect(verified.status).toBe(200)
  }, 180_000)
})
