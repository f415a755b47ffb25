// The sign-in code budgets of `otp_init` per IPv6 /56 and /48, a sub-organization's own codes per
// organization, and the service-wide caps on pending codes and rate entries, each raced over two
// service instances on one PostgreSQL (the per-/64 budget is raced in rateLimits.test.ts).
// Requests of one "minute" are sent at one instant of the shared fake clock, half through each
// instance. The caps once let each instance add rows up to 90% of the cap between two counts of its
// own, so two instances held up to 1.8 times the cap; now each adds at most 1% of it (at least 10)
// between counts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { type Harness, type Json, resultOf, testKey } from '../../src/testing/harness.ts'
import { twoInstances } from '../support/twoInstances.ts'
import { otpInit } from './otpInit.ts'

let cluster: PostgresCluster
const opened: Harness[] = []

beforeAll(async () => {
  cluster = await startPostgres()
}, 600_000)

afterAll(async () => {
  for (const h of opened) await h.service.close()
  await cluster?.dispose()
}, 60_000)

let databases = 0
/** Two fresh instances on a database of their own. */
async function pair(options: Parameters<typeof twoInstances>[2] = {}): Promise<[Harness, Harness]> {
  const both = await twoInstances(cluster, `otp_budgets_${databases++}`, options)
  opened.push(...both)
  return both
}

const count = (answers: { status: number }[], status: number) =>
  answers.filter((answer) => answer.status === status).length

describe('otp_init network budgets raced over two instances', () => {
  it('one /56 (64 distinct /64s, all at once, half through each instance) gets at most its 30 a minute', async () => {
    const [a, b] = await pair()
    const answers = await Promise.all(
      Array.from({ length: 64 }, (_, n) =>
        otpInit(
          n % 2 ? b : a,
          `race56-${n}@spray.example`,
          `2001:db8:77:ab${n.toString(16).padStart(2, '0')}::1`,
        ),
      ),
    )
    // Every answer is a code or a refusal (a 503 from contention would also be no code).
    expect(count(answers, 200)).toBeGreaterThan(0)
    expect(count(answers, 200)).toBeLessThanOrEqual(30)
    // The budget is spent: a fresh /64 of the /56 is refused, a neighbour /56 is not.
    expect((await otpInit(a, 'more56@spray.example', '2001:db8:77:abff::1')).status).toBe(429)
    expect((await otpInit(b, 'neighbour56@example.com', '2001:db8:77:ac00::1')).status).toBe(200)
  }, 60_000)

  it('one /48 (90 distinct /56s, all at once, half through each instance) gets at most its 60 a minute', async () => {
    const [a, b] = await pair()
    const answers = await Promise.all(
      Array.from({ length: 90 }, (_, n) =>
        otpInit(n % 2 ? b : a, `race48-${n}@spray.example`, `2001:db8:5:${(n << 8).toString(16)}::1`),
      ),
    )
    expect(count(answers, 200)).toBeGreaterThan(0)
    expect(count(answers, 200)).toBeLessThanOrEqual(60)
    expect((await otpInit(b, 'more48@spray.example', '2001:db8:5:ff00::1')).status).toBe(429)
    expect((await otpInit(a, 'neighbour48@example.com', '2001:db8:6::1')).status).toBe(200)
  }, 60_000)
})

describe("a sub-organization's own codes raced over two instances", () => {
  it('12 init_otp at once to 12 of its verified contacts, half through each instance: at most 5 a minute', async () => {
    const [a, b] = await pair()
    const key = testKey()
    const contacts = Array.from({ length: 12 }, (_, i) => `holder${i}@own.example`)
    const created = await a.submit('create_sub_organization', {
      subOrganizationName: 'Holder',
      rootUsers: contacts.map((userEmail, i) => ({
        userName: `u${i}`,
        userEmail,
        apiKeys: i === 0 ? [key.apiKey('k')] : [],
        authenticators: [],
        oauthProviders: [],
      })),
      rootQuorumThreshold: 1,
    })
    const organizationId = resultOf('create_sub_organization', created).subOrganizationId as string
    const answers = await Promise.all(
      contacts.map((contact, i) =>
        (i % 2 ? b : a).submit(
          'init_otp',
          { otpType: 'OTP_TYPE_EMAIL', contact },
          { as: key, organizationId },
        ),
      ),
    )
    expect(count(answers, 200)).toBeGreaterThan(0)
    expect(count(answers, 200)).toBeLessThanOrEqual(5)
  }, 60_000)
})

describe('the service-wide caps of the store of codes over two instances', () => {
  it('[otp] max_pending_codes = 20: alternating instances, 20 codes are held and the rest refused, not up to 1.8 times the cap', async () => {
    const CAP = 20
    const [a, b] = await pair({ otpCaps: { maxPendingCodes: CAP } })
    const answers: { status: number; body: Json }[] = []
    // 40 clients, each from its own IPv4 address (its own budget) to its own contact, one after
    // another, alternating instances, all in the same second (no 10 s recount in between).
    for (let i = 0; i < 2 * CAP; i++)
      answers.push(await otpInit(i % 2 ? b : a, `cap-${i}@example.com`, `198.51.100.${i + 1}`))
    const held = await a.service.store.count('pluginRows', 'kind', 'otp')
    // Refused ones say the store is full.
    for (const answer of answers.filter((answer) => answer.status !== 200))
      expect(answer.body.details).toMatchObject({ limit: 'maxPendingCodes' })
    // Control: the cap is reached and enforced at some point (the test does not pass by the cap
    // being ignored altogether, nor fail by every request being refused).
    expect(count(answers, 429)).toBeGreaterThan(0)
    // The cap holds, give or take the rows each instance adds between counts (10 here: 2 x 9 at
    // most). Alternating, each instance counts after every 10 of the 20 rows, so it holds exactly.
    expect({ held, codes: count(answers, 200) }).toEqual({ held: CAP, codes: CAP })
  }, 60_000)

  it('[otp] max_rate_entries = 40: alternating instances, 40 rate entries are held, not up to 1.8 times the cap', async () => {
    const CAP = 40
    const [a, b] = await pair({ otpCaps: { maxRateEntries: CAP } })
    const answers: { status: number; body: Json }[] = []
    // Each code from a fresh IPv4 address to a fresh contact adds 2 entries (address, contact).
    for (let i = 0; i < CAP; i++)
      answers.push(await otpInit(i % 2 ? b : a, `entries-${i}@example.com`, `203.0.113.${i + 1}`))
    const held = await a.service.store.count('pluginRows', 'kind', 'otp-limit')
    expect(count(answers, 429)).toBeGreaterThan(0)
    expect(held).toBe(CAP)
  }, 60_000)
})
