// Fuzz and abuse suite: hostile bodies on every route, races on every "only once" rule,
// memory before and after an unauthenticated flood. In process (app.request), bounded in time:
// a seeded generator, so a failure replays.

import {
  ACTIVITIES,
  type ActivityPath,
  PROXY_CONFIG_HEADER,
  PROXY_PATHS,
  QUERY_PATHS,
  SETTINGS_ROUTES,
} from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { floodSignIn, retainedHeapBytes } from '../../../../bench/signinFlood.ts'
import { s256Challenge } from '../signin/oauth/pkce.ts'
import { createHarness, ETHEREUM_ACCOUNT, type Harness, type Json, type testKey } from '../testing/harness.ts'
import { seededRandom } from '../testing/seededRandom.ts'

const NASTY_STRINGS = [
  '',
  ' ',
  '__proto__',
  'constructor',
  '0x',
  '-1',
  '1e309',
  'NaN',
  '9'.repeat(40),
  "'; DROP TABLE users; --",
  '<script>alert(1)</script>',
  '\u0000\u202e\ud83d\ude00',
  'a'.repeat(5000),
  '../../etc/passwd',
  'OTP_TYPE_EMAIL',
  'CURVE_SECP256K1',
  "m/44'/60'/0'/0/0",
]

/** A random JSON value, at most `depth` deep. */
function hostileValue(next: () => number, depth = 3): unknown {
  const pick = Math.floor(next() * (depth > 0 ? 9 : 6))
  switch (pick) {
    case 0:
      return null
    case 1:
      return next() < 0.5
    case 2:
      return [0, -1, 1.5, 2 ** 53 + 1, -(2 ** 63), 1e308][Math.floor(next() * 6)]
    case 3:
    case 4:
    case 5:
      return NASTY_STRINGS[Math.floor(next() * NASTY_STRINGS.length)]
    case 6:
      return Array.from({ length: Math.floor(next() * 4) }, () => hostileValue(next, depth - 1))
    default: {
      const keys = [
        'organizationId',
        'parameters',
        'type',
        'timestampMs',
        'walletId',
        'contact',
        '__proto__',
        'x',
      ]
      return Object.fromEntries(
        Array.from({ length: Math.floor(next() * 5) }, () => [
          keys[Math.floor(next() * keys.length)]!,
          hostileValue(next, depth - 1),
        ]),
      )
    }
  }
}

/** Fixed hostile bodies every route gets (raw text or bytes). */
const FIXED_BODIES: (string | Uint8Array)[] = [
  '',
  'null',
  '[]',
  '"x"',
  '{',
  '{"a":1,"a":2}',
  '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
  `{"x":${'['.repeat(100)}${']'.repeat(100)}}`,
  new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
  JSON.stringify({ organizationId: 1, type: {}, timestampMs: -1, parameters: [] }),
]

interface Probe {
  route: string
  status: number
  body: string
}

async function send(
  h: Harness,
  route: string,
  body: string | Uint8Array,
  headers: Record<string, string> = {},
): Promise<Probe> {
  const res = await h.service.app.request(route, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  })
  return { route, status: res.status, body: await res.text() }
}

/** Every probe answered below 500, and every 4xx says why (a JSON error naming its code). */
function expectClean(probes: Probe[]) {
  const server = probes.filter((p) => p.status >= 500)
  expect(server.map((p) => `${p.route} ${p.status} ${p.body.slice(0, 200)}`)).toEqual([])
  for (const probe of probes.filter((p) => p.status >= 400 && p.route.startsWith('/')))
    if (!probe.route.startsWith('/dev/oidc')) expect(probe.body, probe.route).toMatch(/"errorCode"/)
  expect(({} as Record<string, unknown>).polluted).toBeUndefined()
}

describe('hostile bodies on every route', () => {
  it('activity and query routes: fixed and random bodies, unstamped and stamped by a root key', async () => {
    const h = await createHarness()
    const next = seededRandom(13)
    const probes: Probe[] = []
    const routes = [
      ...Object.keys(ACTIVITIES).map((path) => `/public/v1/submit/${path}`),
      ...QUERY_PATHS.map((path) => `/public/v1/query/${path}`),
      '/public/v1/submit/no_such_activity',
    ]
    for (const route of routes) {
      for (const body of FIXED_BODIES) probes.push(await send(h, route, body))
      // Stamped, so parsing of hostile parameters is reached (the stamp itself is valid).
      const path = route.split('/').pop() as ActivityPath
      for (let i = 0; i < 6; i++) {
        const payload = JSON.stringify(
          route.includes('/submit/')
            ? {
                type: ACTIVITIES[path]?.type ?? 'ACTIVITY_TYPE_NONE',
                timestampMs: String(h.clock.now() + i),
                organizationId: h.organizationId,
                parameters: hostileValue(next),
              }
            : { organizationId: h.organizationId, ...(hostileValue(next) as object) },
        )
        const [header, value] = h.root.stamp(payload)
        probes.push(await send(h, route, payload, { [header]: value }))
      }
    }
    expect(probes.length).toBeGreaterThan(500)
    expectClean(probes)
  })

  it('auth proxy, operator settings and dev routes', async () => {
    const h = await createHarness()
    const next = seededRandom(7)
    const probes: Probe[] = []
    const proxyHeaders = { [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId! }
    for (const path of [...PROXY_PATHS, 'nope']) {
      for (const body of FIXED_BODIES) probes.push(await send(h, `/v1/${path}`, body, proxyHeaders))
      for (let i = 0; i < 15; i++) {
        const value = hostileValue(next)
        const body = typeof value === 'object' && value !== null && !Array.isArray(value) ? value : { value }
        probes.push(await send(h, `/v1/${path}`, JSON.stringify(body), proxyHeaders))
      }
    }
    for (const route of [SETTINGS_ROUTES.get, SETTINGS_ROUTES.update]) {
      for (const body of FIXED_BODIES) probes.push(await send(h, route, body))
      for (let i = 0; i < 10; i++) {
        const payload = JSON.stringify({
          organizationId: h.organizationId,
          timestampMs: String(h.clock.now() + i),
          settings: hostileValue(next),
        })
        const [header, value] = h.root.stamp(payload)
        probes.push(await send(h, route, payload, { [header]: value }))
      }
    }
    for (const route of ['/dev/oidc/google/token', '/dev/oidc/google/authorize', '/dev/oidc/nobody/token']) {
      for (const body of FIXED_BODIES) probes.push({ ...(await send(h, route, body)), route: `dev:${route}` })
      for (let i = 0; i < 10; i++) {
        const form = new URLSearchParams(
          Object.entries(hostileValue(next, 1) ?? {}).map(([k, v]) => [k, String(v)]),
        ).toString()
        probes.push({
          ...(await send(h, route, form, { 'Content-Type': 'application/x-www-form-urlencoded' })),
          route: `dev:${route}`,
        })
      }
    }
    const outbox = await h.service.app.request('/dev/outbox?contact=%00%ff', { method: 'DELETE' })
    expect(outbox.status).toBeLessThan(500)
    expectClean(probes)
  })
})

describe('input limits on every route family', () => {
  it('oversized bodies are 413 and deep JSON a 400 naming the field, on every family incl. the v2 proxy routes', async () => {
    const h = await createHarness()
    const proxyHeaders = { [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId! }
    const huge = JSON.stringify({ contact: 'x'.repeat(300 * 1024) })
    const deep = `{"contact":${'['.repeat(40)}${']'.repeat(40)}}`
    const families: [string, Record<string, string>][] = [
      ['/public/v1/submit/init_otp', {}],
      ['/public/v1/query/whoami', {}],
      ...PROXY_PATHS.map((path): [string, Record<string, string>] => [`/v1/${path}`, proxyHeaders]),
      [SETTINGS_ROUTES.update, {}],
      ['/dev/oidc/google/authorize', { 'Content-Type': 'application/x-www-form-urlencoded' }],
      ['/dev/oidc/google/token', {}],
      ['/dev/outbox', {}],
    ]
    for (const [route, headers] of families) {
      const big = await send(h, route, huge, headers)
      expect({ route, status: big.status }).toEqual({ route, status: 413 })
      if (route.startsWith('/dev/o')) continue
      const nested = await send(h, route, deep, headers)
      expect({ route, status: nested.status }).toEqual({ route, status: 400 })
      expect(nested.body, route).toMatch(/"field":"contact\[/)
    }
  })
})

const clientKey = () => {
  const privateKey = p256.utils.randomSecretKey()
  return {
    publicKey: bytesToHex(p256.getPublicKey(privateKey, true)),
    sign: (text: string) =>
      bytesToHex(p256.sign(utf8ToBytes(text), privateKey, { prehash: true, format: 'compact' })),
  }
}

async function proxy(h: Harness, path: string, body: unknown): Promise<{ status: number; body: Json }> {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId! },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: await res.json() }
}

async function codeFor(h: Harness, contact: string) {
  const init = await proxy(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact })
  expect(init.status).toBe(200)
  const res = await h.service.app.request(`/dev/outbox.json?contact=${encodeURIComponent(contact)}`)
  const { messages } = (await res.json()) as { messages: { code: string }[] }
  return { otpId: init.body.otpId as string, code: messages[0]!.code }
}

describe('races on every "only once" rule', () => {
  it('one code verifies once among 20 concurrent attempts', async () => {
    const h = await createHarness()
    const { otpId, code } = await codeFor(h, 'race-code@example.com')
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => proxy(h, 'otp_verify', { otpId, otpCode: code })),
    )
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1)
    expect(replies.every((r) => r.status < 500)).toBe(true)
  })

  it('one token logs in once among 20 concurrent logins', async () => {
    const h = await createHarness()
    const email = 'race-login@example.com'
    const key = clientKey()
    const first = await codeFor(h, email)
    const verify = await proxy(h, 'otp_verify', { ...first, otpCode: first.code, public_key: key.publicKey })
    const token = verify.body.verificationToken as string
    const signup = await proxy(h, 'signup', {
      userEmail: email,
      verificationToken: token,
      clientSignature: key.sign(token),
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
    })
    expect(signup.status).toBe(200)
    const replies = await Promise.all(
      Array.from({ length: 20 }, () =>
        proxy(h, 'otp_login', {
          verificationToken: token,
          publicKey: key.publicKey,
          clientSignature: key.sign(token),
        }),
      ),
    )
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1)
    expect(replies.every((r) => r.status < 500)).toBe(true)
    expect(
      await h.service.store.findBy('apiKeys', 'organizationId', signup.body.organizationId),
    ).toHaveLength(1)
  })

  it('one authorization code of the dev IdP is redeemed once among 10 concurrent exchanges', async () => {
    const h = await createHarness()
    const verifier = 'v'.repeat(50)
    const authorize = await h.service.app.request('/dev/oidc/google/authorize', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        response_type: 'code',
        client_id: 'latchkey-dev-google',
        redirect_uri: 'http://localhost:5173/cb',
        code_challenge: s256Challenge(verifier),
        code_challenge_method: 'S256',
        email: 'idp-race@example.com',
        action: 'continue',
      }).toString(),
    })
    expect(authorize.status).toBe(302)
    const code = new URL(authorize.headers.get('location')!).searchParams.get('code')!
    const replies = await Promise.all(
      Array.from({ length: 10 }, () =>
        h.service.app.request('/dev/oidc/google/token', {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code,
            client_id: 'latchkey-dev-google',
            redirect_uri: 'http://localhost:5173/cb',
            code_verifier: verifier,
          }).toString(),
        }),
      ),
    )
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1)
    expect(replies.every((r) => r.status < 500)).toBe(true)
  })

  it('a pending activity executes once among 10 concurrent approvals, and a user votes once', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({ users: 2, threshold: 2 })
    const [k1, k2] = sub.keys as [ReturnType<typeof testKey>, Awaited<ReturnType<typeof testKey>>]
    const at = { organizationId: sub.organizationId }
    const pending = await h.submit(
      'create_wallet',
      { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] },
      {
        ...at,
        as: k1,
      },
    )
    expect(pending.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const fingerprint = pending.body.activity.fingerprint
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        h.submit(
          'approve_activity',
          { fingerprint },
          { ...at, as: k2, timestampMs: String(h.clock.now() + i) },
        ),
      ),
    )
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1)
    expect(replies.every((r) => r.status < 500)).toBe(true)
    expect(await h.service.store.findBy('wallets', 'organizationId', sub.organizationId)).toHaveLength(1)
    expect(await h.service.store.findBy('votes', 'activityId', pending.body.activity.id)).toHaveLength(2)
  })
})

describe('memory under an unauthenticated flood', () => {
  it('4 x 300 posts with a 150 KB client_id, 1,200 authorize codes and 1,200 otp_init: bounded, no 5xx', async () => {
    const h = await createHarness()
    const statuses = new Map<number, number>()
    // Warm up (JIT, first allocations), then measure a second flood: the JavaScript objects that
    // stay reachable after a full GC, and the process's RSS (which the database's memory is part of).
    await floodSignIn(h.service, 'a', statuses)
    const heapBefore = retainedHeapBytes()
    const rssBefore = process.memoryUsage().rss
    await floodSignIn(h.service, 'b', statuses)
    const heapGrowth = retainedHeapBytes() - heapBefore
    const rssGrowth = process.memoryUsage().rss - rssBefore
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([])
    expect(statuses.get(413)).toBe(2 * 1200)
    // The per-address budget stopped the otp_init flood.
    expect((await h.service.store.findBy('pluginRows', 'kind', 'otp')).length).toBeLessThanOrEqual(200)
    // Pending codes are capped (1,000 x ~4 KB), so a second flood retains next to nothing more.
    expect(heapGrowth).toBeLessThan(16 * 1024 * 1024)
    expect(rssGrowth).toBeLessThan(96 * 1024 * 1024)
  })
})
