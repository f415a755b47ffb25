import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import type { CreateServiceOptions } from '../../src/createService.ts'
import type { EventSink } from '../../src/observability/events.ts'
import { createMetrics } from '../../src/observability/metrics.ts'
import { openPostgres } from '../../src/store/durableStores.ts'
import { createHarness, fakeClock, type Harness, type Json, type TestKey } from '../../src/testing/harness.ts'

interface Answer {
  status: number
  retryAfter: string | null
  body: Json
}

/** A stamped `whoami` query as `key` in `organizationId`, with the answer's headers. */
async function whoami(
  h: Harness,
  key: TestKey,
  organizationId: string,
  timestampMs = Date.now(),
): Promise<Answer> {
  const body = JSON.stringify({ organizationId, timestampMs: String(timestampMs) })
  const [header, value] = key.stamp(body)
  const response = await h.service.app.request('/public/v1/query/whoami', {
    method: 'POST',
    headers: { 'content-type': 'application/json', [header]: value },
    body,
  })
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: await response.json(),
  }
}

describe('rate limits on the activity API (one instance)', () => {
  async function setup(rateLimits?: CreateServiceOptions['rateLimits']) {
    const events: [string, unknown][] = []
    const sink: EventSink = { emit: (name, data) => events.push([name, data]) }
    const h = await createHarness({ ...(rateLimits ? { rateLimits } : {}), events: sink })
    const a = await h.createSubOrganization({ users: 2 })
    const b = await h.createSubOrganization({ users: 1 })
    return { h, a, b, events }
  }

  it('refuses a key over its budget with 429, Retry-After and the limit named; other keys go on', async () => {
    const { h, a, b, events } = await setup({ perKey: { perSecond: 5, burst: 3 } })
    const [first, second] = a.keys
    const now = h.clock.now()
    const answers = []
    for (let i = 0; i < 5; i++) answers.push(await whoami(h, first!, a.organizationId, now + i))
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429, 429])
    expect(answers[3]).toEqual({
      status: 429,
      retryAfter: '1',
      body: {
        code: 8,
        message: 'more than 5 requests per second (burst 3) from this credential',
        details: { errorCode: 'RATE_LIMITED', limit: 'perKey', perSecond: 5, burst: 3, retryAfterSeconds: 1 },
      },
    })
    expect(events.filter(([name]) => name === 'rate_limit.refused')).toEqual([
      ['rate_limit.refused', { limit: 'perKey', kind: 'query' }],
      ['rate_limit.refused', { limit: 'perKey', kind: 'query' }],
    ])
    // Another key of the same organization, and a key of another one, have their own budgets.
    expect((await whoami(h, second!, a.organizationId, now + 10)).status).toBe(200)
    expect((await whoami(h, b.keys[0]!, b.organizationId, now + 11)).status).toBe(200)
    // One interval later the key has room for one more, and only one.
    h.clock.advance(200)
    expect((await whoami(h, first!, a.organizationId, now + 300)).status).toBe(200)
    expect((await whoami(h, first!, a.organizationId, now + 301)).status).toBe(429)
    // Activities are charged to the same budget.
    const refused = await h.submit(
      'create_wallet',
      { walletName: 'w', accounts: [] },
      { as: first!, organizationId: a.organizationId },
    )
    expect(refused.status).toBe(429)
    expect(events.filter(([name]) => name === 'rate_limit.refused').at(-1)).toEqual([
      'rate_limit.refused',
      { limit: 'perKey', kind: 'activity' },
    ])
    await h.service.close()
  })

  it('per organization: every key of the organization shares it, other organizations do not; the metric counts each refusal', async () => {
    const metrics = createMetrics()
    const h = await createHarness({
      rateLimits: { perOrganization: { perSecond: 2, burst: 2 } },
      events: metrics,
    })
    const a = await h.createSubOrganization({ users: 2 })
    const b = await h.createSubOrganization({ users: 1 })
    const now = h.clock.now()
    expect((await whoami(h, a.keys[0]!, a.organizationId, now)).status).toBe(200)
    expect((await whoami(h, a.keys[1]!, a.organizationId, now + 1)).status).toBe(200)
    const third = await whoami(h, a.keys[1]!, a.organizationId, now + 2)
    expect(third.status).toBe(429)
    expect(third.body.message).toBe('more than 2 requests per second in this organization')
    expect(third.body.details.limit).toBe('perOrganization')
    expect((await whoami(h, b.keys[0]!, b.organizationId, now + 3)).status).toBe(200)
    expect((await whoami(h, a.keys[0]!, a.organizationId, now + 4)).status).toBe(429)
    const refusals = (await metrics.registry.getSingleMetric('latchkey_rate_limited_total')!.get()).values
    expect(refusals.map(({ labels, value }) => [labels, value])).toEqual([
      [{ limit: 'perOrganization', kind: 'query' }, 2],
    ])
    await h.service.close()
  })

  it('limits nothing unless configured', async () => {
    const { h, a } = await setup()
    const now = h.clock.now()
    for (let i = 0; i < 30; i++)
      expect((await whoami(h, a.keys[0]!, a.organizationId, now + i)).status).toBe(200)
    await h.service.close()
  })

  it('never refuses the auth proxy forwarding sign-ins', async () => {
    const h = await createHarness({
      rateLimits: { perKey: { perSecond: 1, burst: 1 }, perOrganization: { perSecond: 1, burst: 1 } },
    })
    for (let i = 0; i < 4; i++) {
      const response = await h.service.app.request('/v1/otp_init', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'X-Auth-Proxy-Config-Id': h.service.dev.authProxyConfigId!,
        },
        body: JSON.stringify({ otpType: 'OTP_TYPE_EMAIL', contact: `user${i}@example.com` }),
      })
      expect(response.status).toBe(200)
    }
    await h.service.close()
  })
})

describe('rate limits across two instances on PostgreSQL', () => {
  let cluster: PostgresCluster | undefined
  const instances: Harness[] = []
  const RATE = 10
  const BURST = 5
  // One clock for both instances, moved by the test: 100 requests a second of the service's time,
  // however busy the machine running the test is.
  const clock = fakeClock(Date.now())

  beforeAll(async () => {
    cluster = await startPostgres()
    const masterKey = randomBytes(32)
    const apiPrivateKey = randomBytes(32).toString('hex')
    for (let i = 0; i < 2; i++)
      instances.push(
        await createHarness({
          store: await openPostgres(cluster.url, { max: 8 }),
          masterKey,
          clock,
          dev: { apiPrivateKey },
          rateLimits: { perKey: { perSecond: RATE, burst: BURST } },
        }),
      )
  }, 600_000)
  afterAll(async () => {
    for (const h of instances) await h.service.close()
    await cluster?.dispose()
  })

  it('100 requests/s from one key over both: the configured rate gets through, the rest 429 with Retry-After', async () => {
    const [a, b] = instances as [Harness, Harness]
    const org = await a.createSubOrganization({ users: 2 })
    const other = await b.createSubOrganization({ users: 1 })
    const [flooding, quiet] = org.keys as [TestKey, TestKey]
    const answers: Answer[] = []
    const neighbours: Answer[] = []
    const started = clock.now()
    const seconds = 3
    // Every 20 ms one request to each instance at the same instant: 100 a second from one key.
    for (let tick = 0; tick < 50 * seconds; tick++) {
      clock.set(started + tick * 20)
      answers.push(
        ...(await Promise.all([
          whoami(a, flooding, org.organizationId),
          whoami(b, flooding, org.organizationId),
        ])),
      )
      // Another key of the same organization and a key of another organization, 2 requests/s each.
      if (tick % 25 === 12)
        neighbours.push(
          await whoami(tick % 50 ? a : b, quiet, org.organizationId),
          await whoami(tick % 50 ? b : a, other.keys[0]!, other.organizationId),
        )
    }
    const span = (clock.now() - started) / 1000 + 0.02
    const allowed = answers.filter((answer) => answer.status === 200).length
    const refused = answers.filter((answer) => answer.status === 429)
    expect(allowed + refused.length).toBe(answers.length)
    // The sustained rate, once the burst is taken off, is the configured one ±10%.
    const sustained = (allowed - BURST) / span
    expect(sustained).toBeGreaterThanOrEqual(RATE * 0.9)
    expect(sustained).toBeLessThanOrEqual(RATE * 1.1)
    for (const answer of refused) {
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1)
      expect(answer.body.details).toMatchObject({ errorCode: 'RATE_LIMITED', limit: 'perKey' })
    }
    expect((await Promise.all(neighbours)).map((answer) => answer.status)).toEqual(neighbours.map(() => 200))
  }, 120_000)
})
