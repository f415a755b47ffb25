// Each attack path on sign-in, tried over HTTP (app.request) the way an outside caller
// would; every test here failed on the service before the fix.

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import { decodeJwtClaims, PROXY_CONFIG_HEADER, SETTINGS_ROUTES } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { afterAll, describe, expect, it } from 'vitest'
import { createService } from '../assembly/createService.ts'
import { loadMasterKey, openDataDir } from '../kernel/store/durableStores.ts'
import { openMemoryStore } from '../kernel/store/memory.ts'
import {
  createHarness,
  fakeClock,
  type Harness,
  type Json,
  resultOf,
  type TestKey,
  testKey,
} from '../testing/harness.ts'

const APP = 'http://app.test'
const REMOTE = '203.0.113.9'

/** Hono node-server's env: what `clientAddress` reads the socket address from. */
const fromAddress = (remoteAddress: string) => ({ incoming: { socket: { remoteAddress } } })

interface Reply {
  status: number
  body: Json
  headers: Headers
}

async function call(
  h: Harness,
  path: string,
  body: unknown,
  options: { origin?: string; address?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json',
    [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
    Origin: options.origin ?? APP,
  }
  const res = await h.service.app.request(
    `/v1/${path}`,
    { method: 'POST', headers, body: JSON.stringify(body) },
    options.address ? fromAddress(options.address) : undefined,
  )
  return { status: res.status, body: await res.json(), headers: res.headers }
}

const errorOf = (reply: { status: number; body: Json }) => ({
  status: reply.status,
  errorCode: reply.body?.details?.errorCode,
})

function clientKey() {
  const privateKey = p256.utils.randomSecretKey()
  const publicKey = bytesToHex(p256.getPublicKey(privateKey, true))
  return {
    publicKey,
    sign: (text: string) =>
      bytesToHex(p256.sign(utf8ToBytes(text), privateKey, { prehash: true, format: 'compact' })),
  }
}

async function outbox(h: Harness, contact: string) {
  const res = await h.service.app.request(`/dev/outbox.json?contact=${encodeURIComponent(contact)}`)
  return (
    (await res.json()) as { messages: { code: string; otpId: string; body: string; subject: string }[] }
  ).messages
}

/** otp_init → outbox → otp_verify through the proxy; the token is bound to `key`. */
async function proxyToken(h: Harness, email: string, key = clientKey()) {
  const init = await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
  expect(init.status).toBe(200)
  const [message] = await outbox(h, email)
  const verify = await call(h, 'otp_verify', {
    otpId: init.body.otpId,
    otpCode: message!.code,
    public_key: key.publicKey,
  })
  expect(verify.status).toBe(200)
  return { key, token: verify.body.verificationToken as string }
}

/** A sub-organization made by the operator whose one root user has `email` (and `key`). */
async function subOrgWithEmail(h: Harness, email: string, key: TestKey = testKey()) {
  const reply = await h.submit('create_sub_organization', {
    subOrganizationName: `Account of ${email}`,
    rootUsers: [
      {
        userName: email,
        userEmail: email,
        apiKeys: [key.apiKey('k')],
        authenticators: [],
        oauthProviders: [],
      },
    ],
    rootQuorumThreshold: 1,
  })
  expect(reply.status).toBe(200)
  return {
    organizationId: resultOf('create_sub_organization', reply).subOrganizationId as string,
    key,
  }
}

/** A self-made sub-organization (wallet sign-up: no proof of anything needed). */
async function walletSignup(h: Harness, organizationName = 'mine') {
  const key = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1')
  const reply = await call(h, 'signup', {
    userName: 'attacker',
    organizationName,
    apiKeys: [key.apiKey('wallet')],
    authenticators: [],
    oauthProviders: [],
  })
  expect(reply.status).toBe(200)
  return { organizationId: reply.body.organizationId as string, key }
}

/** The kit's OTP sign-up: the proven e-mail, the token and the bound key's hex signature over it. */
const otpSignup = (
  h: Harness,
  email: string,
  proof: { token: string; key: Awaited<ReturnType<typeof clientKey>> },
) =>
  call(h, 'signup', {
    userEmail: email,
    verificationToken: proof.token,
    clientSignature: proof.key.sign(proof.token),
    apiKeys: [],
    authenticators: [],
    oauthProviders: [],
  })

describe('class 2: a verification token is spent once, atomically', () => {
  it('30 concurrent sign-ups with one token create exactly one sub-organization', async () => {
    const h = await createHarness()
    const email = 'race@example.com'
    const proof = await proxyToken(h, email)
    const replies = await Promise.all(Array.from({ length: 30 }, () => otpSignup(h, email, proof)))
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1)
    for (const reply of replies.filter((r) => r.status !== 200)) expect(reply.status).toBe(409)
    const accounts = []
    for (const org of await h.service.store.findBy('organizations', 'parentOrganizationId', h.organizationId))
      if (
        (await h.service.store.findBy('users', 'organizationId', org.id)).some((u) => u.userEmail === email)
      )
        accounts.push(org)
    expect(accounts).toHaveLength(1)
  })

  it('two tokens for one e-mail signed up concurrently still make one account', async () => {
    const h = await createHarness()
    const email = 'twice@example.com'
    const first = await proxyToken(h, email)
    const second = await proxyToken(h, email)
    const replies = await Promise.all([first, second].map((proof) => otpSignup(h, email, proof)))
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409])
  })
})

describe('class 3: tokens are bound to where they were minted', () => {
  it('a sub-organization user cannot start or verify a code for a contact that is not theirs', async () => {
    const h = await createHarness()
    const attacker = await walletSignup(h)
    const reply = await h.submit(
      'init_otp',
      { otpType: 'OTP_TYPE_EMAIL', contact: 'victim@example.com' },
      { as: attacker.key, organizationId: attacker.organizationId },
    )
    expect(errorOf(reply)).toEqual({ status: 403, errorCode: 'PERMISSION_DENIED' })
    expect(reply.body.details.field).toBe('parameters.contact')
    expect(await outbox(h, 'victim@example.com')).toHaveLength(0)
  })

  it('a token minted in one sub-organization logs in nowhere else, and signs nobody up', async () => {
    const h = await createHarness()
    const email = 'shared@example.com'
    // Two accounts (one e-mail belongs to one account: the operator cannot give it to both); A's user verifies a code in A.
    const a = await subOrgWithEmail(h, email)
    const b = await subOrgWithEmail(h, 'other@example.com')
    const key = clientKey()
    const init = await h.submit(
      'init_otp',
      { otpType: 'OTP_TYPE_EMAIL', contact: email },
      { as: a.key, organizationId: a.organizationId },
    )
    expect(init.status).toBe(200)
    const [message] = await outbox(h, email)
    const verify = await h.submit(
      'verify_otp',
      {
        otpId: resultOf('init_otp', init).otpId,
        otpCode: message!.code,
        publicKey: key.publicKey,
      },
      { as: a.key, organizationId: a.organizationId },
    )
    expect(verify.status).toBe(200)
    const token = resultOf('verify_otp', verify).verificationToken as string
    expect(decodeJwtClaims(token)).toMatchObject({ organization_id: a.organizationId })

    const intoB = await call(h, 'otp_login', {
      verificationToken: token,
      publicKey: key.publicKey,
      clientSignature: key.sign(token),
      organizationId: b.organizationId,
    })
    expect(errorOf(intoB)).toEqual({ status: 401, errorCode: 'VERIFICATION_TOKEN_INVALID' })
    expect(intoB.body.message).toMatch(/another organization/)
    const signup = await call(h, 'signup', {
      verificationToken: token,
      clientSignature: key.sign(token),
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
    })
    expect(errorOf(signup)).toEqual({ status: 401, errorCode: 'VERIFICATION_TOKEN_INVALID' })
    expect(signup.body.message).toMatch(/another organization/)
    // In A itself the token still works.
    const intoA = await call(h, 'otp_login', {
      verificationToken: token,
      publicKey: key.publicKey,
      clientSignature: key.sign(token),
      organizationId: a.organizationId,
    })
    expect(intoA.status).toBe(200)
  })
})

describe('class 4: OTP budgets per contact, service-wide, in the store', () => {
  it('codes for one contact share one budget across the proxy and every sub-organization', async () => {
    const h = await createHarness()
    const email = 'budget@example.com'
    for (let i = 0; i < 3; i++)
      expect((await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })).status).toBe(200)
    expect(errorOf(await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email }))).toEqual({
      status: 429,
      errorCode: 'OTP_RATE_LIMITED',
    })
    // The same person's account in a sub-organization cannot start more.
    const account = await subOrgWithEmail(h, email)
    const direct = await h.submit(
      'init_otp',
      { otpType: 'OTP_TYPE_EMAIL', contact: email },
      { as: account.key, organizationId: account.organizationId },
    )
    expect(errorOf(direct)).toEqual({ status: 429, errorCode: 'OTP_RATE_LIMITED' })
    expect(direct.body.details.retryAfterSeconds).toBeGreaterThan(0)
  })

  it('wrong guesses for one contact are budgeted across its codes, and the budget survives a restart', async () => {
    const clock = fakeClock()
    const store = await openMemoryStore()
    const masterKey = crypto.getRandomValues(new Uint8Array(32))
    const h = await createHarness({ clock, store, masterKey })
    const email = 'guess@example.com'
    let guesses = 0
    let refusedAt = -1
    for (let round = 0; round < 4 && refusedAt < 0; round++) {
      const init = await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
      expect(init.status).toBe(200)
      for (let i = 0; i < 5; i++) {
        const reply = await call(h, 'otp_verify', { otpId: init.body.otpId, otpCode: '000000' })
        if (reply.body.details?.errorCode === 'OTP_RATE_LIMITED') {
          refusedAt = guesses
          break
        }
        guesses++
      }
      clock.advance(61_000)
    }
    expect(refusedAt).toBe(10)
    // A restarted service on the same store still refuses.
    const again = await createHarness({ clock, store, masterKey })
    const init = await call(again, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
    expect(init.status).toBe(200)
    const [message] = await outbox(again, email)
    expect(
      errorOf(await call(again, 'otp_verify', { otpId: init.body.otpId, otpCode: message!.code })),
    ).toEqual({
      status: 429,
      errorCode: 'OTP_RATE_LIMITED',
    })
  })

  it('otp_init through the proxy is budgeted per client address across contacts', async () => {
    const h = await createHarness()
    const statuses: number[] = []
    for (let i = 0; i < 21; i++)
      statuses.push(
        (
          await call(
            h,
            'otp_init',
            { otpType: 'OTP_TYPE_EMAIL', contact: `p${i}@example.com` },
            { address: REMOTE },
          )
        ).status,
      )
    expect(statuses.slice(0, 20).every((s) => s === 200)).toBe(true)
    expect(statuses[20]).toBe(429)
    // Another address is not affected.
    const other = await call(
      h,
      'otp_init',
      { otpType: 'OTP_TYPE_EMAIL', contact: 'x@example.com' },
      {
        address: '198.51.100.7',
      },
    )
    expect(other.status).toBe(200)
    expect((await h.service.store.findBy('pluginRows', 'kind', 'otp-limit')).length).toBeGreaterThan(0)
  })
})

describe('class 5: only the operator chooses what is sent', () => {
  it('init_otp cannot set the template, the app name or a lifetime beyond the operator cap', async () => {
    const h = await createHarness()
    const phone = '+14155550123'
    const key = testKey()
    const reply = await h.submit('create_sub_organization', {
      subOrganizationName: 'URGENT: call +1 555 0100',
      rootUsers: [
        {
          userName: 'me',
          userPhoneNumber: phone,
          apiKeys: [key.apiKey('k')],
          authenticators: [],
          oauthProviders: [],
        },
        { userName: 'me2', userEmail: 'me@example.com', apiKeys: [], authenticators: [], oauthProviders: [] },
      ],
      rootQuorumThreshold: 1,
    })
    const sub = resultOf('create_sub_organization', reply).subOrganizationId as string
    const sms = await h.submit(
      'init_otp',
      {
        otpType: 'OTP_TYPE_SMS',
        contact: phone,
        smsCustomization: {
          template: 'Your bank account is locked. Log in at http://evil.test/login {{code}}',
        },
      },
      { as: key, organizationId: sub },
    )
    expect(sms.status).toBe(200)
    const [text] = await outbox(h, phone)
    expect(text!.body).not.toMatch(/evil|locked/)
    const mail = await h.submit(
      'init_otp',
      {
        otpType: 'OTP_TYPE_EMAIL',
        contact: 'me@example.com',
        expirationSeconds: '86400',
        emailCustomization: { appName: 'URGENT: call +1 555 0100' },
      },
      { as: key, organizationId: sub },
    )
    expect(mail.status).toBe(200)
    const [letter] = await outbox(h, 'me@example.com')
    expect(`${letter!.subject} ${letter!.body}`).not.toMatch(/URGENT/)
    expect(letter!.body).toMatch(/5 minutes|5 min/)
    const otpId = resultOf('init_otp', mail).otpId
    h.clock.advance(301_000)
    const late = await h.submit(
      'verify_otp',
      { otpId, otpCode: letter!.code },
      { as: key, organizationId: sub },
    )
    expect(errorOf(late)).toEqual({ status: 412, errorCode: 'OTP_EXPIRED' })
  })

  it("the operator's appName and otpExpirationSeconds are what the message carries", async () => {
    const h = await createHarness()
    const body = JSON.stringify({
      organizationId: h.organizationId,
      timestampMs: String(h.clock.now()),
      settings: { appName: 'Acme Wallet', otpExpirationSeconds: '120' },
    })
    const [header, value] = h.root.stamp(body)
    expect((await h.post(SETTINGS_ROUTES.update, body, { [header]: value })).status).toBe(200)
    const init = await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'op@example.com' })
    expect(init.status).toBe(200)
    const [letter] = await outbox(h, 'op@example.com')
    expect(`${letter!.subject} ${letter!.body}`).toMatch(/Acme Wallet/)
    h.clock.advance(121_000)
    expect(
      errorOf(await call(h, 'otp_verify', { otpId: init.body.otpId, otpCode: letter!.code })).errorCode,
    ).toBe('OTP_EXPIRED')
  })
})

describe('the operator sets the shortest code', () => {
  it("init_otp cannot ask for a code shorter than the operator's otpLength", async () => {
    const h = await createHarness()
    const body = JSON.stringify({
      organizationId: h.organizationId,
      timestampMs: String(h.clock.now()),
      settings: { otpLength: 8 },
    })
    const [header, value] = h.root.stamp(body)
    expect((await h.post(SETTINGS_ROUTES.update, body, { [header]: value })).status).toBe(200)
    const contact = 'long@example.com'
    expect((await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact, otpLength: 6 })).status).toBe(200)
    const direct = await h.submit('init_otp', { otpType: 'OTP_TYPE_EMAIL', contact, otpLength: 6 })
    expect(direct.status).toBe(200)
    h.clock.advance(1000)
    expect((await h.submit('init_otp', { otpType: 'OTP_TYPE_EMAIL', contact, otpLength: 9 })).status).toBe(
      200,
    )
    const lengths = (await outbox(h, contact)).map((message) => message.code.length).sort()
    expect(lengths).toEqual([8, 8, 9])
  })

  it("the operator's otpAlphabet makes every code alphanumeric; an unknown alphabet is refused naming the field", async () => {
    const h = await createHarness()
    const update = async (settings: Record<string, unknown>) => {
      h.clock.advance(1000)
      const body = JSON.stringify({
        organizationId: h.organizationId,
        timestampMs: String(h.clock.now()),
        settings,
      })
      const [header, value] = h.root.stamp(body)
      return h.post(SETTINGS_ROUTES.update, body, { [header]: value })
    }
    const bad = await update({ otpAlphabet: 'emoji' })
    expect(errorOf(bad)).toEqual({ status: 400, errorCode: 'ENUM_INVALID' })
    expect(bad.body.message).toMatch(/otpAlphabet must be digits or alphanumeric/)
    expect((await update({ otpAlphabet: 'alphanumeric' })).status).toBe(200)
    const contact = 'letters@example.com'
    expect((await h.submit('init_otp', { otpType: 'OTP_TYPE_EMAIL', contact, otpLength: 6 })).status).toBe(
      200,
    )
    const [message] = await outbox(h, contact)
    expect(message!.code).toMatch(/^[0-9A-HJKMNP-TV-Z]{6}$/)
  })
})

describe('class 6: operator settings updates are not replayable', () => {
  it('a captured stamped update is refused the second time, and when stale', async () => {
    const h = await createHarness()
    const body = JSON.stringify({
      organizationId: h.organizationId,
      timestampMs: String(h.clock.now()),
      settings: { sessionExpirationSeconds: '3600' },
    })
    const [header, value] = h.root.stamp(body)
    expect((await h.post(SETTINGS_ROUTES.update, body, { [header]: value })).status).toBe(200)
    const replay = await h.post(SETTINGS_ROUTES.update, body, { [header]: value })
    expect(errorOf(replay)).toEqual({ status: 401, errorCode: 'STAMP_INVALID' })
    expect(replay.body.message).toMatch(/already applied/)
    h.clock.advance(10 * 60_000)
    expect(errorOf(await h.post(SETTINGS_ROUTES.update, body, { [header]: value })).errorCode).toBe(
      'TIMESTAMP_STALE',
    )
  })
})

describe('class 7: dev surfaces stay local', () => {
  const get = (h: Harness, path: string, headers: Record<string, string>, address?: string) =>
    h.service.app.request(path, { headers }, address ? fromAddress(address) : undefined)

  it('the outbox answers loopback clients and allowed origins only, never with a * grant', async () => {
    const h = await createHarness()
    await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'v@example.com' })
    const evil = await get(h, '/dev/outbox.json', { Origin: 'https://evil.test' })
    expect(evil.status).toBe(403)
    expect(evil.headers.get('access-control-allow-origin')).toBeNull()
    const [sent] = await outbox(h, 'v@example.com')
    expect(await evil.text()).not.toContain(sent!.code)
    const remote = await get(h, '/dev/outbox.json', {}, REMOTE)
    expect(remote.status).toBe(403)
    const local = await get(h, '/dev/outbox.json', { Origin: 'http://localhost:5173' }, '127.0.0.1')
    expect(local.status).toBe(200)
    expect(local.headers.get('access-control-allow-origin')).toBe('http://localhost:5173')
    expect((await get(h, '/dev/outbox.json', {}, '::ffff:127.0.0.1')).status).toBe(200)
    // DNS rebinding: a foreign name resolving to 127.0.0.1 is "same origin" but not allowed.
    const rebound = await h.service.app.request(
      'http://evil.test:8787/dev/outbox.json',
      { headers: { Origin: 'http://evil.test:8787' } },
      fromAddress('127.0.0.1'),
    )
    expect(rebound.status).toBe(403)
  })

  it('a rebinding page (a foreign Host on 127.0.0.1) reads neither the outbox nor /public', async () => {
    const h = await createHarness()
    await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'rb@example.com' })
    const [sent] = await outbox(h, 'rb@example.com')
    const server = serve({ fetch: h.service.app.fetch, port: 0, hostname: '127.0.0.1' })
    try {
      await new Promise((resolve) => server.once('listening', resolve))
      const { port } = server.address() as AddressInfo
      const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = httpRequest({ host: '127.0.0.1', port, path, method, headers }, (res) => {
            let text = ''
            res.setEncoding('utf8')
            res.on('data', (chunk: string) => {
              text += chunk
            })
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
          })
          req.on('error', reject)
          req.end(body)
        })
      const evil = `evil.example:${port}`
      // A same-origin GET carries no Origin: only the Host tells the rebinding page apart.
      const rebinding: Record<string, string>[] = [{ Host: evil }, { Host: evil, Origin: `http://${evil}` }]
      for (const headers of rebinding) {
        const refused = await send('GET', '/dev/outbox.json', headers)
        expect(refused.status).toBe(403)
        expect(JSON.parse(refused.body).details.errorCode).toBe('ORIGIN_NOT_ALLOWED')
        expect(JSON.parse(refused.body).message).toContain(`host ${evil}`)
        expect(refused.body).not.toContain(sent!.code)
      }
      for (const host of [
        `localhost:${port}`,
        `127.0.0.1:${port}`,
        `[::1]:${port}`,
        `app.localhost:${port}`,
      ]) {
        const served = await send('GET', '/dev/outbox.json?contact=rb%40example.com', { Host: host })
        expect({ host, status: served.status }).toEqual({ host, status: 200 })
        expect(served.body).toContain(sent!.code)
      }
      const query = () => {
        const body = JSON.stringify({ organizationId: h.organizationId })
        const [header, value] = h.root.stamp(body)
        return { body, headers: { 'Content-Type': 'application/json', [header]: value } }
      }
      const rebound = query()
      const refused = await send(
        'POST',
        '/public/v1/query/whoami',
        { ...rebound.headers, Host: evil, Origin: `http://${evil}` },
        rebound.body,
      )
      expect(refused.status).toBe(403)
      expect(JSON.parse(refused.body).message).toContain(`host ${evil}`)
      expect(refused.body).not.toContain(h.organizationId)
      const local = query()
      const served = await send(
        'POST',
        '/public/v1/query/whoami',
        { ...local.headers, Host: `localhost:${port}`, Origin: `http://${evil}` },
        local.body,
      )
      expect(served.status).toBe(200)
      expect(JSON.parse(served.body).organizationId).toBe(h.organizationId)
      // A name the operator lists is served on the dev surfaces, on any port.
      const body = JSON.stringify({
        organizationId: h.organizationId,
        timestampMs: String(h.clock.now()),
        settings: { allowedOrigins: ['http://wallet.test:5173'] },
      })
      const [header, value] = h.root.stamp(body)
      expect((await h.post(SETTINGS_ROUTES.update, body, { [header]: value })).status).toBe(200)
      expect((await send('GET', '/dev/outbox.json', { Host: `wallet.test:${port}` })).status).toBe(200)
      expect((await send('GET', '/dev/outbox.json', { Host: evil })).status).toBe(403)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('the dev IdP and the settings routes refuse foreign origins and remote clients', async () => {
    const h = await createHarness()
    const idp = await get(h, '/dev/oidc/google/.well-known/openid-configuration', {
      Origin: 'https://evil.test',
    })
    expect(idp.status).toBe(403)
    expect((await get(h, '/dev/oidc/google/jwks', {}, REMOTE)).status).toBe(403)
    const preflight = await h.service.app.request('/dev/settings/update', {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.test', 'Access-Control-Request-Method': 'POST' },
    })
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('/public grants CORS to configured and loopback origins only', async () => {
    const h = await createHarness()
    const preflight = (origin: string) =>
      h.service.app.request('/public/v1/query/whoami', {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' },
      })
    expect((await preflight('https://evil.test')).headers.get('access-control-allow-origin')).toBeNull()
    expect((await preflight('http://127.0.0.1:4173')).headers.get('access-control-allow-origin')).toBe(
      'http://127.0.0.1:4173',
    )
    const body = JSON.stringify({
      organizationId: h.organizationId,
      timestampMs: String(h.clock.now()),
      settings: { allowedOrigins: ['https://shop.example'] },
    })
    const [header, value] = h.root.stamp(body)
    expect((await h.post(SETTINGS_ROUTES.update, body, { [header]: value })).status).toBe(200)
    expect((await preflight('https://shop.example')).headers.get('access-control-allow-origin')).toBe(
      'https://shop.example',
    )
  })
})

describe('class 8: nothing readable at rest opens an account', () => {
  const dirs: string[] = []
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it('codes are stored as an HMAC under a sealed server secret, files 0600 in a 0700 directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-sec-'))
    dirs.push(dir)
    const service = await createService({ store: await openDataDir(dir), masterKey: loadMasterKey(dir) })
    const h = { service } as unknown as Harness
    const init = await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'rest@example.com' })
    expect(init.status).toBe(200)
    const [message] = await outbox(h, 'rest@example.com')
    const otpId = init.body.otpId as string
    const snapshot = JSON.stringify(await service.store.dump())
    // Neither the code nor the old unkeyed digest of it is anywhere in the data.
    expect(snapshot).not.toContain(bytesToHex(sha256(utf8ToBytes(`${otpId}:${message!.code}`))))
    const record = (await service.store.get('pluginRows', `otp:${otpId}`))!.data as { codeMac: string }
    // Brute force without the secret finds nothing: no key among guessable ones gives the stored MAC.
    for (const guess of [new Uint8Array(32), utf8ToBytes(otpId)])
      expect(bytesToHex(hmac(sha256, guess, utf8ToBytes(`${otpId}:${message!.code}`)))).not.toBe(
        record.codeMac,
      )
    const secretRow = (await service.store.get('pluginRows', 'otp-mac-key'))!
    expect(JSON.stringify(secretRow.data)).not.toMatch(/"[0-9a-f]{64}"/)
    // While the service runs: the database, its WAL, the lock and the key are the owner's only.
    const files = ['latchkey.sqlite', 'latchkey.sqlite-wal', 'LOCK', 'master.key']
    for (const file of files)
      expect({ file, mode: statSync(join(dir, file)).mode & 0o777 }).toEqual({ file, mode: 0o600 })
    // The raw database file holds neither the code nor its unkeyed digest either.
    const raw = Buffer.concat([
      readFileSync(join(dir, 'latchkey.sqlite')),
      readFileSync(join(dir, 'latchkey.sqlite-wal')),
    ]).toString('latin1')
    expect(raw).toContain(record.codeMac)
    expect(raw).not.toContain(bytesToHex(sha256(utf8ToBytes(`${otpId}:${message!.code}`))))
    await service.close()
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    for (const file of ['latchkey.sqlite', 'master.key'])
      expect({ file, mode: statSync(join(dir, file)).mode & 0o777 }).toEqual({ file, mode: 0o600 })
  })
})

describe('class 9: memory stays bounded for unauthenticated callers', () => {
  it('the dev IdP refuses huge parameters and caps pending codes', async () => {
    const h = await createHarness()
    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
    const form = (clientId: string) =>
      new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: 'http://localhost:5173/cb',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        email: 'a@example.com',
        action: 'continue',
      }).toString()
    const post = (body: string) =>
      h.service.app.request('/dev/oidc/google/authorize', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body,
      })
    const long = await post(form('c'.repeat(10_000)))
    expect(long.status).toBe(400)
    const { signInState } = await import('../signin/signInState.ts')
    const idp = signInState(h.service.runtime).devIdp
    expect(idp.pendingCodes()).toBe(0)
    for (let i = 0; i < 1100; i++) expect((await post(form(`client-${i}`))).status).toBe(302)
    expect(idp.pendingCodes()).toBeLessThanOrEqual(1000)
    // Expired codes are dropped.
    h.clock.advance(61_000)
    expect((await post(form('late'))).status).toBe(302)
    expect(idp.pendingCodes()).toBe(1)
  })

  it('expired OTP records and idle rate-limit buckets are dropped', async () => {
    const h = await createHarness()
    for (let i = 0; i < 5; i++)
      await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: `m${i}@example.com` })
    expect(await h.service.store.findBy('pluginRows', 'kind', 'otp')).toHaveLength(5)
    h.clock.advance(2 * 3600_000)
    await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'fresh@example.com' })
    expect(await h.service.store.findBy('pluginRows', 'kind', 'otp')).toHaveLength(1)
    // The fresh contact's: its codes sent, and its guesses (kept while its code lives).
    expect(await h.service.store.findBy('pluginRows', 'kind', 'otp-limit')).toHaveLength(2)
  })
})
