import { randomBytes } from 'node:crypto'
import { CAPTCHA_TOKEN_HEADER, PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import type { EventSink } from '../../src/kernel/base/events.ts'
import { openPostgres } from '../../src/kernel/store/durableStores.ts'
import { createMetrics } from '../../src/observability/metrics.ts'
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

interface ProxyAnswer extends Answer {}

/** An anonymous auth-proxy call (`/v1/<path>`) from `address`, as the Node server hands it over. */
async function proxyCall(
  h: Harness,
  path: string,
  body: object,
  address: string,
  captchaToken?: string,
): Promise<ProxyAnswer> {
  const response = await h.service.app.request(
    `/v1/${path}`,
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
        ...(captchaToken ? { [CAPTCHA_TOKEN_HEADER]: captchaToken } : {}),
      },
      body: JSON.stringify(body),
    },
    { incoming: { socket: { remoteAddress: address } } },
  )
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

  it("a flood of anonymous /v1/account look-ups spends none of the operator's budget: the root key's list_wallets all pass", async () => {
    const h = await createHarness({ rateLimits: { perOrganization: { perSecond: 10, burst: 20 } } })
    // 150 look-ups in one instant of the service's time, each from its own address (no per-address
    // budget configured): before, each was charged to the parent organization's budget.
    const lookups = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        proxyCall(
          h,
          'account',
          { filterType: 'EMAIL', filterValue: `nobody${i}@example.com` },
          `198.51.100.${i}`,
        ),
      ),
    )
    expect(lookups.map((answer) => answer.status)).toEqual(lookups.map(() => 200))
    const listed: number[] = []
    for (let i = 0; i < 16; i++)
      listed.push((await h.query('list_wallets', { timestampMs: String(h.clock.now()) })).status)
    expect(listed).toEqual(listed.map(() => 200))
    // The operator's own keys still have their budget: the 21st call of the same instant is refused.
    for (let i = 0; i < 4; i++) await h.query('list_wallets', { timestampMs: String(h.clock.now()) })
    const over = await h.query('list_wallets', { timestampMs: String(h.clock.now()) })
    expect(over.status).toBe(429)
    expect(over.body.details.limit).toBe('perOrganization')
    await h.service.close()
  })

  it('anonymous /v1/* calls have a budget per client address (an IPv6 one by its /64): 429 with Retry-After, others go on', async () => {
    const metrics = createMetrics()
    const h = await createHarness({
      rateLimits: { perClientAddress: { perSecond: 2, burst: 3 } },
      events: metrics,
    })
    const statuses = async (address: string, count: number) => {
      const answers: ProxyAnswer[] = []
      for (let i = 0; i < count; i++) answers.push(await proxyCall(h, 'wallet_kit_config', {}, address))
      return answers
    }
    const flooding = await statuses('203.0.113.7', 5)
    expect(flooding.map((answer) => answer.status)).toEqual([200, 200, 200, 429, 429])
    expect(flooding[3]).toMatchObject({
      status: 429,
      retryAfter: '1',
      body: {
        message: 'more than 2 requests per second (burst 3) from this address',
        details: { errorCode: 'RATE_LIMITED', limit: 'perClientAddress', retryAfterSeconds: 1 },
      },
    })
    // Every route of the proxy spends the same budget, otp_init included.
    const otp = await proxyCall(
      h,
      'otp_init',
      { otpType: 'OTP_TYPE_EMAIL', contact: 'a@example.com' },
      '203.0.113.7',
    )
    expect(otp.status).toBe(429)
    // Another address has its own budget; addresses of one IPv6 /64 share one.
    expect((await statuses('203.0.113.8', 3)).map((answer) => answer.status)).toEqual([200, 200, 200])
    const v6 = [
      ...(await statuses('2001:db8:1:2::1', 2)),
      ...(await statuses('2001:db8:1:2:ffff::9', 2)),
      ...(await statuses('2001:db8:1:3::1', 1)),
    ]
    expect(v6.map((answer) => answer.status)).toEqual([200, 200, 200, 429, 200])
    // Half a second later the address has room for one more.
    h.clock.advance(500)
    expect((await statuses('203.0.113.7', 2)).map((answer) => answer.status)).toEqual([200, 429])
    const refusals = (await metrics.registry.getSingleMetric('latchkey_rate_limited_total')!.get()).values
    expect(refusals.map(({ labels, value }) => [labels, value])).toEqual([
      [{ limit: 'perClientAddress', kind: 'proxy' }, 5],
    ])
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
          rateLimits: {
            perKey: { perSecond: RATE, burst: BURST },
            perClientAddress: { perSecond: RATE, burst: BURST },
          },
          // A CAPTCHA whose siteverify (this fetch) passes every token: a solving service's view.
          captcha: { provider: 'turnstile', siteKey: 'site-key', secret: 'secret' },
          fetch: async () => Response.json({ success: true }),
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

  it('one client address alternating between the instances gets one burst of anonymous calls, not one per instance', async () => {
    const [a, b] = instances as [Harness, Harness]
    clock.advance(60_000)
    const answers: ProxyAnswer[] = []
    for (let i = 0; i < 4 * BURST; i++)
      answers.push(await proxyCall(i % 2 ? b : a, 'wallet_kit_config', {}, '203.0.113.50'))
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(BURST)
    for (const answer of answers.filter((answer) => answer.status !== 200)) {
      expect(answer.status).toBe(429)
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1)
      expect(answer.body.details).toMatchObject({ errorCode: 'RATE_LIMITED', limit: 'perClientAddress' })
    }
    // A neighbour's address is not held back.
    expect((await proxyCall(b, 'wallet_kit_config', {}, '203.0.113.51')).status).toBe(200)
  })

  it('a solved CAPTCHA on every request still sends one contact at most 10 codes in 10 minutes, across both instances', async () => {
    const [a, b] = instances as [Harness, Harness]
    clock.advance(60_000)
    const contact = `bombed-${randomBytes(4).toString('hex')}@example.com`
    const send = (h: Harness, i: number) =>
      proxyCall(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact }, `198.51.100.${i}`, 'solved')
    const answers: ProxyAnswer[] = []
    // Each request from its own address, alternating instances, 5 seconds apart.
    for (let i = 0; i < 12; i++) {
      answers.push(await send(i % 2 ? b : a, i))
      clock.advance(5_000)
    }
    expect(answers.map((answer) => answer.status)).toEqual([...Array(10).fill(200), 429, 429])
    expect(answers[10]!.body.details).toMatchObject({
      errorCode: 'OTP_RATE_LIMITED',
      field: 'parameters.contact',
    })
    expect(answers[10]!.body.details.retryAfterSeconds).toBeGreaterThan(0)
    // Ten minutes after the first code the window has room again.
    clock.advance(10 * 60_000 - 12 * 5_000 + 1)
    expect((await send(a, 20)).status).toBe(200)
  })
})
