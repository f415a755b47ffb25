// Abuse of shared budgets (issue 36, findings 6 and 8), tried the way an outside caller would:
// through `trustProxies` as `start` serves it behind a reverse proxy, and through the auth proxy
// with a CAPTCHA that every token passes (a solving service). Each attack of the findings (a
// spoofed Forwarded, IPv6 address rotation, a solved CAPTCHA per code) failed on the service
// before the fix; the spoofed X-Forwarded-For prefix and the Forwarded-setting cases guard what
// already held. The per-address and per-organization budgets, and both of these across
// two instances on PostgreSQL, are in test/rateLimits/rateLimits.test.ts.

import { CAPTCHA_TOKEN_HEADER, PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import type { CreateServiceOptions } from '../assembly/createService.ts'
import { serverSection } from '../config/sections/server.ts'
import { type ForwardedHeader, forwardedInfo, proxyMatcher, trustProxies } from '../config/trustedProxies.ts'
import { addressBudgetKey } from '../pipeline/rateLimit.ts'
import { OTP_INIT_PER_ADDRESS } from '../signin/proxy/otpInit.ts'
import { createHarness, fakeClock, type Harness, type Json } from '../testing/harness.ts'

/** The reverse proxy's address, in `server.trusted_proxies`. */
const PROXY = '10.0.0.2'

/** A CAPTCHA whose siteverify passes every token, remembering the `remoteip` it was sent. */
function solvingService() {
  const remoteIps: (string | null)[] = []
  const options: Pick<CreateServiceOptions, 'captcha' | 'fetch'> = {
    captcha: { provider: 'turnstile', siteKey: 'site-key', secret: 'secret' },
    fetch: async (_url, init) => {
      remoteIps.push(new URLSearchParams(String(init?.body)).get('remoteip'))
      return Response.json({ success: true })
    },
  }
  return { options, remoteIps }
}

/**
 * `start`'s server behind a proxy at PROXY: `headers` are what the proxy passed on (a client's
 * own headers it does not touch, and what it set itself).
 */
async function throughProxy(
  h: Harness,
  header: ForwardedHeader,
  path: string,
  body: object,
  headers: Record<string, string>,
): Promise<{ status: number; body: Json }> {
  const fetch = trustProxies(h.service.app.fetch, [PROXY], header)
  const response = await fetch(
    new Request(`http://127.0.0.1/v1/${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
        ...headers,
      },
      body: JSON.stringify(body),
    }),
    { incoming: { socket: { remoteAddress: PROXY } } },
  )
  return { status: response.status, body: await response.json() }
}

/** otp_init calls to fresh contacts until one is refused (at most `max`): how many passed, and the refusal. */
async function sendUntilRefused(
  h: Harness,
  header: ForwardedHeader,
  headersOf: (i: number) => Record<string, string>,
  max = OTP_INIT_PER_ADDRESS.perMinute + 2,
) {
  for (let i = 0; i < max; i++) {
    const reply = await throughProxy(
      h,
      header,
      'otp_init',
      { otpType: 'OTP_TYPE_EMAIL', contact: `user${i}@example.com` },
      headersOf(i),
    )
    if (reply.status !== 200) return { passed: i, refusal: reply }
  }
  return { passed: max, refusal: undefined }
}

describe('a client-written forwarding header behind a trusted proxy', () => {
  it('nginx appending X-Forwarded-For: a spoofed Forwarded buys no more otp_init calls, nor the CAPTCHA’s remoteip', async () => {
    const solver = solvingService()
    const h = await createHarness({ clock: fakeClock(), ...solver.options })
    // What nginx passes on: the client's own Forwarded untouched, X-Forwarded-For with the client appended.
    const spoofed = await sendUntilRefused(h, 'x-forwarded-for', (i) => ({
      Forwarded: `for=10.9.${i}.1`,
      'X-Forwarded-For': '192.0.2.10',
      [CAPTCHA_TOKEN_HEADER]: 'solved',
    }))
    expect(spoofed.passed).toBe(OTP_INIT_PER_ADDRESS.perMinute)
    expect(spoofed.refusal).toMatchObject({
      status: 429,
      body: { details: { errorCode: 'OTP_RATE_LIMITED' } },
    })
    // The provider was told the address the proxy saw, never the one the client wrote.
    expect(new Set(solver.remoteIps)).toEqual(new Set(['192.0.2.10']))
  })

  it('a spoofed X-Forwarded-For prefix (nginx appends the real client) buys no more either', async () => {
    const h = await createHarness({ clock: fakeClock() })
    const spoofed = await sendUntilRefused(h, 'x-forwarded-for', (i) => ({
      'X-Forwarded-For': `10.9.${i}.1, 192.0.2.11`,
    }))
    expect(spoofed.passed).toBe(OTP_INIT_PER_ADDRESS.perMinute)
    expect(spoofed.refusal?.status).toBe(429)
  })

  it('a proxy that sets Forwarded (forwarded_header = "forwarded"): a spoofed X-Forwarded-For or Forwarded prefix is ignored', async () => {
    const h = await createHarness({ clock: fakeClock() })
    const spoofed = await sendUntilRefused(h, 'forwarded', (i) => ({
      'X-Forwarded-For': `10.9.${i}.1`,
      'X-Real-IP': `10.8.${i}.1`,
      Forwarded: `for=10.7.${i}.1, for=192.0.2.12;proto=https`,
    }))
    expect(spoofed.passed).toBe(OTP_INIT_PER_ADDRESS.perMinute)
    expect(spoofed.refusal?.status).toBe(429)
  })

  it('reads only the configured family, the rightmost untrusted hop of it', () => {
    const trusted = proxyMatcher([PROXY, '10.1.0.0/16'])
    const headers = new Headers({
      Forwarded: 'for=10.9.0.1;proto=http;host=evil.example',
      'X-Forwarded-For': '10.9.0.2, 192.0.2.20, 10.1.2.3',
      'X-Forwarded-Proto': 'https',
      'X-Forwarded-Host': 'wallet.example.com',
      'X-Real-IP': '192.0.2.21',
    })
    expect(forwardedInfo(headers, trusted)).toEqual({
      client: '192.0.2.20',
      proto: 'https',
      host: 'wallet.example.com',
    })
    expect(forwardedInfo(headers, trusted, 'forwarded')).toEqual({
      client: '10.9.0.1',
      proto: 'http',
      host: 'evil.example',
    })
    expect(forwardedInfo(headers, trusted, 'x-real-ip')).toEqual({
      client: '192.0.2.21',
      proto: 'https',
      host: 'wallet.example.com',
    })
    // The configured family absent: no forwarded client (the socket's address, the proxy's, is used).
    expect(forwardedInfo(new Headers({ Forwarded: 'for=10.9.0.1' }), trusted)).toEqual({})
    expect(forwardedInfo(new Headers({ 'X-Forwarded-For': '10.9.0.1' }), trusted, 'forwarded')).toEqual({})
  })

  it('[server] forwarded_header defaults to x-forwarded-for and names itself when wrong', () => {
    expect(serverSection.parse({}).forwarded_header).toBe('x-forwarded-for')
    const result = serverSection.safeParse({ forwarded_header: 'X-Forwarded' })
    expect(result.success).toBe(false)
    expect(result.error!.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)).toEqual([
      'forwarded_header: must be one of x-forwarded-for, forwarded, x-real-ip',
    ])
  })

  it('per-address budgets key an IPv6 client by its /64 and an IPv4-mapped one as IPv4', () => {
    expect(addressBudgetKey('192.0.2.1')).toBe('192.0.2.1')
    expect(addressBudgetKey('::ffff:192.0.2.1')).toBe('192.0.2.1')
    expect(addressBudgetKey('2001:db8:0:1:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:0:1::/64')
    expect(addressBudgetKey('2001:DB8:0:1::9')).toBe('2001:db8:0:1::/64')
    expect(addressBudgetKey('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(addressBudgetKey('::1')).toBe('0:0:0:0::/64')
    expect(addressBudgetKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
  })

  it('an IPv4 client a NAT64 translator writes in 64:ff9b::/96 or 64:ff9b:1::/48 is keyed by its IPv4 address, not one /64 all IPv4 clients share', async () => {
    expect(addressBudgetKey('64:ff9b::c633:6401')).toBe('198.51.100.1')
    expect(addressBudgetKey('64:FF9B::198.51.100.1')).toBe('198.51.100.1')
    expect(addressBudgetKey('64:ff9b:0:0:0:0:cb00:7101')).toBe('203.0.113.1')
    expect(addressBudgetKey('::ffff:c633:6401')).toBe('198.51.100.1')
    // A translator's /96 in the local-use prefix 64:ff9b:1::/48 (RFC 8215) too: it was a /64 too.
    expect(addressBudgetKey('64:ff9b:1::c633:6401')).toBe('198.51.100.1')
    expect(addressBudgetKey('64:ff9b:1:2:3:4:cb00:7101')).toBe('203.0.113.1')
    // Not a translation prefix: an IPv6 client as any other.
    expect(addressBudgetKey('64:ff9b:2::c633:6401')).toBe('64:ff9b:2:0::/64')
    expect(addressBudgetKey('2001:db8::198.51.100.1')).toBe('2001:db8:0:0::/64')
    // 198.51.100.1 spends its budget; 203.0.113.1, someone elsewhere, still gets a code.
    const h = await createHarness({ clock: fakeClock() })
    for (let i = 0; i < OTP_INIT_PER_ADDRESS.perMinute; i++)
      expect((await otpInit(h, `a${i}@attacker.example`, '64:ff9b::c633:6401')).status).toBe(200)
    expect((await otpInit(h, 'a-last@attacker.example', '64:ff9b::c633:6401')).status).toBe(429)
    expect((await otpInit(h, 'victim@example.com', '64:ff9b::cb00:7101')).status).toBe(200)
  })

  it('otp_init from many addresses of one IPv6 /64 shares one per-address budget', async () => {
    const h = await createHarness({ clock: fakeClock() })
    const spread = await sendUntilRefused(h, 'x-forwarded-for', (i) => ({
      'X-Forwarded-For': `2001:db8:5:6::${(i + 1).toString(16)}`,
    }))
    expect(spread.passed).toBe(OTP_INIT_PER_ADDRESS.perMinute)
    expect(spread.refusal?.status).toBe(429)
  })
})

/** otp_init for `contact` straight to the app, from `address`, with a CAPTCHA token. */
async function otpInit(h: Harness, contact: string, address: string, token?: string) {
  const response = await h.service.app.request(
    '/v1/otp_init',
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
        ...(token ? { [CAPTCHA_TOKEN_HEADER]: token } : {}),
      },
      body: JSON.stringify({ otpType: 'OTP_TYPE_EMAIL', contact }),
    },
    { incoming: { socket: { remoteAddress: address } } },
  )
  return { status: response.status, body: (await response.json()) as Json }
}

describe('a solved CAPTCHA and the per-contact bound', () => {
  it('12 codes to one address within a minute, each with a solved CAPTCHA: the 11th is refused until the window moves', async () => {
    const h = await createHarness({ clock: fakeClock(), ...solvingService().options })
    const victim = 'bombed@example.com'
    const answers = []
    for (let i = 0; i < 12; i++) {
      answers.push(await otpInit(h, victim, `198.51.100.${i}`, 'solved'))
      h.clock.advance(4_000)
    }
    expect(answers.map((answer) => answer.status)).toEqual([...Array(10).fill(200), 429, 429])
    expect(answers[10]!.body.details).toMatchObject({
      errorCode: 'OTP_RATE_LIMITED',
      field: 'parameters.contact',
    })
    // The ordinary budget is its own: a request without a CAPTCHA still gets its code...
    expect((await otpInit(h, victim, '198.51.100.99')).status).toBe(200)
    // ...and another contact its own ceiling.
    expect((await otpInit(h, 'other@example.com', '198.51.100.98', 'solved')).status).toBe(200)
    // Ten minutes after the first code, one more with a CAPTCHA; the next once the second one ages out.
    h.clock.advance(10 * 60_000 - 12 * 4_000)
    expect((await otpInit(h, victim, '198.51.100.97', 'solved')).status).toBe(200)
    expect((await otpInit(h, victim, '198.51.100.96', 'solved')).status).toBe(429)
    h.clock.advance(4_000)
    expect((await otpInit(h, victim, '198.51.100.95', 'solved')).status).toBe(200)
  })

  it('the ceiling is the operator’s: [captcha] per_contact_codes / per_contact_window_minutes', async () => {
    const solver = solvingService()
    const h = await createHarness({
      clock: fakeClock(),
      ...solver.options,
      captcha: { ...solver.options.captcha!, perContact: { codes: 3, windowMinutes: 30 } },
    })
    const answers = []
    for (let i = 0; i < 4; i++) {
      answers.push((await otpInit(h, 'x@example.com', `198.51.100.${i}`, 'solved')).status)
      h.clock.advance(5 * 60_000)
    }
    expect(answers).toEqual([200, 200, 200, 429])
  })
})
