import {
  CLIENT_SIGNATURE_SCHEME,
  CORS_ALLOWED_HEADERS,
  clientSignatureMessage,
  decodeJwtClaims,
  PROXY_CONFIG_HEADER,
  SETTINGS_ROUTES,
  type SessionClaims,
} from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { MAX_SESSION_SECONDS } from '../../domain/sessions.ts'
import { openMemoryStore } from '../../kernel/store/memory.ts'
import { apiKeyInOrganization } from '../../kernel/store/model.ts'
import {
  createHarness,
  fakeClock,
  type Harness,
  type Json,
  type Reply,
  resultOf,
  type Stamper,
  softPasskey,
  type TestKey,
  testKey,
} from '../../testing/harness.ts'
import { oidcNonce } from '../oauth/oidcNonce.ts'
import { s256Challenge } from '../oauth/pkce.ts'

const APP = 'http://app.test'

interface ProxyReply {
  status: number
  body: Json
  headers: Headers
}

/** A browser page at `origin` calling the auth proxy, counting its round trips. */
function browser(h: Harness, origin = APP) {
  const configId = h.service.dev.authProxyConfigId!
  let trips = 0
  const call = async (
    path: string,
    body: unknown = {},
    options: { configId?: string | null; origin?: string | null } = {},
  ): Promise<ProxyReply> => {
    trips++
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' }
    const id = options.configId === undefined ? configId : options.configId
    if (id !== null) headers[PROXY_CONFIG_HEADER] = id
    const from = options.origin === undefined ? origin : options.origin
    if (from !== null) headers.Origin = from
    const res = await h.service.app.request(`/v1/${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    })
    return { status: res.status, body: await res.json(), headers: res.headers }
  }
  return {
    call,
    configId,
    get trips() {
      return trips
    },
    resetTrips: () => {
      trips = 0
    },
  }
}

/** The client's session key (the kit keeps it as a non-extractable CryptoKey). */
function clientKey() {
  const privateKey = p256.utils.randomSecretKey()
  const publicKey = bytesToHex(p256.getPublicKey(privateKey, true))
  return {
    privateKey,
    publicKey,
    /** raw r‖s hex, what WebCrypto's ECDSA sign returns. */
    signRaw: (text: string) =>
      bytesToHex(p256.sign(utf8ToBytes(text), privateKey, { prehash: true, format: 'compact' })),
    signDer: (text: string) =>
      bytesToHex(p256.sign(utf8ToBytes(text), privateKey, { prehash: true, format: 'der' })),
    stamper: (): TestKey => testKey('SIGNATURE_SCHEME_TK_API_P256', privateKey),
  }
}

/**
 * The published clients' sign-up consent: the key bound at otp_verify signs the credentials the
 * new account gets (`USAGE_TYPE_SIGNUP`).
 */
function signupConsent(
  key: Awaited<ReturnType<typeof clientKey>>,
  body: {
    verificationToken: string
    userEmail?: string
    userPhoneNumber?: string
    apiKeys?: unknown[]
    authenticators?: unknown[]
    oauthProviders?: unknown[]
  },
) {
  const message = clientSignatureMessage({
    type: 'USAGE_TYPE_SIGNUP',
    tokenId: decodeJwtClaims<{ id: string }>(body.verificationToken).id,
    signupV2: {
      apiKeys: body.apiKeys ?? [],
      authenticators: body.authenticators ?? [],
      oauthProviders: body.oauthProviders ?? [],
      ...(body.userEmail ? { email: body.userEmail } : {}),
      ...(body.userPhoneNumber ? { phoneNumber: body.userPhoneNumber } : {}),
    },
  })
  return {
    message,
    publicKey: key.publicKey,
    scheme: CLIENT_SIGNATURE_SCHEME,
    signature: key.signRaw(message),
  }
}

const lastCode = async (h: Harness, contact: string) => {
  const res = await h.service.app.request(`/dev/outbox?contact=${encodeURIComponent(contact)}`, {
    headers: { Accept: 'application/json' },
  })
  return ((await res.json()) as { messages: { code: string; otpId: string }[] }).messages[0]!
}

const errorOf = (reply: ProxyReply) => ({ status: reply.status, errorCode: reply.body.details?.errorCode })

async function settings(
  h: Harness,
  changes: Record<string, unknown>,
  as: Stamper = h.root,
  organizationId = h.organizationId,
) {
  const body = JSON.stringify({ organizationId, timestampMs: String(h.clock.now()), settings: changes })
  const [header, value] = as.stamp(body)
  return h.post(SETTINGS_ROUTES.update, body, { [header]: value })
}

/** e-mail OTP up to the verification token, bound to `key`. */
async function verifiedEmail(
  h: Harness,
  page: Awaited<ReturnType<typeof browser>>,
  email: string,
  key = clientKey(),
) {
  const init = await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
  expect(init.status).toBe(200)
  const { code } = await lastCode(h, email)
  const verify = await page.call('otp_verify', {
    otpId: init.body.otpId,
    otpCode: code,
    public_key: key.publicKey,
  })
  expect(verify.status).toBe(200)
  return { key, verificationToken: verify.body.verificationToken as string }
}

/** Whoami through the activity API, stamped with a session key. */
async function whoami(h: Harness, stamper: Stamper, organizationId: string) {
  const reply = await h.query('whoami', { organizationId }, { as: stamper })
  expect(reply.status).toBe(200)
  return reply.body
}

describe('auth proxy: e-mail OTP', () => {
  it('signs up then logs in, counting round trips, with a session that works on the activity API', async () => {
    const h = await createHarness()
    const page = browser(h)
    const email = 'ada@example.com'
    const key = clientKey()

    // Sign-up: enter e-mail → code → verify → lookup (none) → signup → login.
    const init = await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'Ada@Example.com' })
    expect(init).toMatchObject({ status: 200, body: { otpId: expect.any(String) } })
    expect(init.headers.get('access-control-allow-origin')).toBe(APP)
    const message = await lastCode(h, email)
    expect(message.otpId).toBe(init.body.otpId)
    const verify = await page.call('otp_verify', {
      otpId: init.body.otpId,
      otpCode: message.code,
      public_key: key.publicKey,
    })
    const verificationToken = verify.body.verificationToken as string
    expect(decodeJwtClaims(verificationToken)).toEqual({
      id: expect.any(String),
      verification_type: 'OTP_TYPE_EMAIL',
      contact: email,
      public_key: key.publicKey,
      organization_id: h.organizationId,
      iat: Math.floor(h.clock.now() / 1000),
      exp: Math.floor(h.clock.now() / 1000) + 600,
    })
    const none = await page.call('account', { filterType: 'EMAIL', filterValue: email })
    expect(none.body).toEqual({ organizationId: null })
    const signup = await page.call('signup', {
      userName: 'Ada',
      userEmail: email,
      verificationToken,
      client_signature: key.signRaw(verificationToken),
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
      wallet: { path: "m/44'/60'/0'/0/0", curve: 'CURVE_SECP256K1' },
    })
    expect(signup.status).toBe(200)
    expect(signup.body).toEqual({
      organizationId: expect.any(String),
      userId: expect.any(String),
      walletId: expect.any(String),
      addresses: [expect.stringMatching(/^0x[0-9a-fA-F]{40}$/)],
    })
    const login = await page.call('otp_login', {
      verificationToken,
      publicKey: key.publicKey,
      client_signature: key.signRaw(verificationToken),
    })
    expect(login.status).toBe(200)
    expect(page.trips).toBe(5)
    const claims = decodeJwtClaims<SessionClaims>(login.body.session)
    expect(claims).toEqual({
      exp: Math.floor(h.clock.now() / 1000) + 900,
      iat: Math.floor(h.clock.now() / 1000),
      public_key: key.publicKey,
      session_type: 'SESSION_TYPE_READ_WRITE',
      user_id: signup.body.userId,
      organization_id: signup.body.organizationId,
    })
    expect(await whoami(h, key.stamper(), signup.body.organizationId)).toMatchObject({
      userId: signup.body.userId,
    })
    const wallet = await h.submit(
      'create_wallet',
      { walletName: 'Second', accounts: [] },
      { as: key.stamper(), organizationId: signup.body.organizationId },
    )
    expect(wallet.status).toBe(200)

    // Later login: enter e-mail → code → verify → login (the proxy finds the account by the
    // token's contact); DER signature, camelCase fields.
    const found = await page.call('account', { filterType: 'EMAIL', filterValue: email })
    expect(found.body).toEqual({ organizationId: signup.body.organizationId })
    page.resetTrips()
    const again = await verifiedEmail(h, page, email)
    const second = await page.call('otp_login', {
      verificationToken: again.verificationToken,
      publicKey: again.key.publicKey,
      clientSignature: again.key.signDer(again.verificationToken),
      expirationSeconds: '120',
      invalidateExisting: true,
    })
    expect(second.status).toBe(200)
    expect(page.trips).toBe(3)
    expect(decodeJwtClaims<SessionClaims>(second.body.session).exp).toBe(
      Math.floor(h.clock.now() / 1000) + 120,
    )
    // invalidateExisting revoked the first session key.
    const stale = await h.query(
      'whoami',
      { organizationId: signup.body.organizationId },
      { as: key.stamper() },
    )
    expect(stale.status).toBe(401)
  })

  it("forwards sessionProfileId: a login naming the app's profile gets a session confined to its scope", async () => {
    const h = await createHarness()
    const page = browser(h)
    const email = 'lin@example.com'
    // The app's profile (the parent organization's): its sessions may sign, nothing else.
    const profileId = resultOf(
      'create_session_profile',
      await h.submit('create_session_profile', {
        sessionProfileName: 'sign only',
        scope: "activity.action == 'SIGN'",
        expirationSeconds: '300',
      }),
    ).sessionProfileId as string
    const first = await verifiedEmail(h, page, email)
    const signup = await page.call('signup', {
      userEmail: email,
      verificationToken: first.verificationToken,
      client_signature: first.key.signRaw(first.verificationToken),
      wallet: { path: "m/44'/60'/0'/0/0", curve: 'CURVE_SECP256K1' },
    })
    expect(signup.status).toBe(200)
    const organizationId = signup.body.organizationId as string
    const login = async (sessionProfileId: string) => {
      const { key, verificationToken } = await verifiedEmail(h, page, email)
      const reply = await page.call('otp_login', {
        verificationToken,
        publicKey: key.publicKey,
        clientSignature: key.signRaw(verificationToken),
        sessionProfileId,
      })
      return { key, reply }
    }
    const unknown = await login('no-such-profile')
    expect([unknown.reply.status, unknown.reply.body.details]).toMatchObject([
      404,
      { field: 'parameters.sessionProfileId' },
    ])
    const { key, reply } = await login(profileId)
    expect(reply.status).toBe(200)
    // The profile's lifetime, not the proxy's 900 s default.
    expect(decodeJwtClaims<SessionClaims>(reply.body.session).exp).toBe(
      Math.floor(h.clock.now() / 1000) + 300,
    )
    const as = { as: key.stamper(), organizationId }
    h.clock.advance(1)
    const signed = await h.submit(
      'sign_raw_payload',
      {
        signWith: signup.body.addresses[0],
        payload: `0x${'ab'.repeat(32)}`,
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      },
      as,
    )
    expect(signed.status).toBe(200)
    h.clock.advance(1)
    const wallet = await h.submit('create_wallet', { walletName: 'Outside', accounts: [] }, as)
    expect([wallet.status, wallet.body.details?.errorCode]).toEqual([403, 'SESSION_SCOPE_DENIED'])
  })

  it('refuses a wrong, expired, reused code, and locks after five wrong codes', async () => {
    const h = await createHarness()
    const page = browser(h)
    const init = await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'bob@example.com' })
    const { code } = await lastCode(h, 'bob@example.com')
    const wrong = code === '000000' ? '111111' : '000000'
    const key = clientKey()
    const verify = (otpCode: string, otpId = init.body.otpId) =>
      page.call('otp_verify', { otpId, otpCode, publicKey: key.publicKey })

    const first = await verify(wrong)
    expect(first.status).toBe(400)
    expect(first.body).toEqual({
      code: 3,
      message: 'wrong code',
      details: { errorCode: 'OTP_INVALID', field: 'parameters.otpCode', attemptsRemaining: 4 },
    })
    for (let i = 0; i < 3; i++)
      expect(errorOf(await verify(wrong))).toEqual({ status: 400, errorCode: 'OTP_INVALID' })
    expect(errorOf(await verify(wrong))).toEqual({ status: 429, errorCode: 'OTP_ATTEMPTS_EXCEEDED' })
    expect(errorOf(await verify(code))).toEqual({ status: 429, errorCode: 'OTP_ATTEMPTS_EXCEEDED' })

    const fresh = await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'bob@example.com' })
    const freshCode = (await lastCode(h, 'bob@example.com')).code
    expect((await verify(freshCode, fresh.body.otpId)).status).toBe(200)
    expect(errorOf(await verify(freshCode, fresh.body.otpId))).toEqual({
      status: 400,
      errorCode: 'OTP_INVALID',
    })

    h.clock.advance(60_000)
    const late = await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'bob@example.com' })
    const lateCode = (await lastCode(h, 'bob@example.com')).code
    h.clock.advance(300_000)
    expect(errorOf(await verify(lateCode, late.body.otpId))).toEqual({
      status: 412,
      errorCode: 'OTP_EXPIRED',
    })
  })

  it('rate-limits otp_init per contact with a 429', async () => {
    const h = await createHarness()
    const page = browser(h)
    for (let i = 0; i < 3; i++)
      expect(
        (await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'eve@example.com' })).status,
      ).toBe(200)
    const limited = await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'eve@example.com' })
    expect(limited.status).toBe(429)
    expect(limited.body.details).toEqual({
      errorCode: 'OTP_RATE_LIMITED',
      field: 'parameters.contact',
      retryAfterSeconds: 60,
    })
    expect(
      (await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'other@example.com' })).status,
    ).toBe(200)
    h.clock.advance(60_000)
    expect(
      (await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'eve@example.com' })).status,
    ).toBe(200)
  })

  it('refuses bad contacts and a bad client signature, and spends the token once', async () => {
    const h = await createHarness()
    const page = browser(h)
    expect(errorOf(await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'nope' }))).toEqual({
      status: 400,
      errorCode: 'CONTACT_INVALID',
    })
    expect(errorOf(await page.call('otp_init', { otpType: 'OTP_TYPE_SMS', contact: '0612345678' }))).toEqual({
      status: 400,
      errorCode: 'CONTACT_INVALID',
    })
    expect(errorOf(await page.call('otp_init', { otpType: 'OTP_TYPE_PIGEON', contact: 'a@b.io' }))).toEqual({
      status: 400,
      errorCode: 'ENUM_INVALID',
    })
    const { key, verificationToken } = await verifiedEmail(h, page, 'cy@example.com')
    expect(
      (
        await page.call('signup', {
          userEmail: 'cy@example.com',
          verificationToken,
          clientSignature: key.signRaw(verificationToken),
        })
      ).status,
    ).toBe(200)
    const intruder = clientKey()
    const login = (signature: string | undefined, publicKey = key.publicKey) =>
      page.call('otp_login', {
        verificationToken,
        publicKey,
        ...(signature ? { client_signature: signature } : {}),
      })
    expect(errorOf(await login(intruder.signRaw(verificationToken), intruder.publicKey))).toEqual({
      status: 401,
      errorCode: 'CLIENT_SIGNATURE_INVALID',
    })
    expect(errorOf(await login(undefined))).toEqual({ status: 401, errorCode: 'CLIENT_SIGNATURE_INVALID' })
    expect(errorOf(await login(key.signRaw(`${verificationToken}x`)))).toEqual({
      status: 401,
      errorCode: 'CLIENT_SIGNATURE_INVALID',
    })
    expect((await login(key.signRaw(verificationToken))).status).toBe(200)
    expect(errorOf(await login(key.signRaw(verificationToken)))).toEqual({
      status: 401,
      errorCode: 'VERIFICATION_TOKEN_INVALID',
    })
    // A forged token (right shape, wrong signer) and an expired one.
    const [head, , sig] = verificationToken.split('.')
    const forgedClaims = btoa(JSON.stringify({ ...decodeJwtClaims(verificationToken), id: 'other' })).replace(
      /=+$/,
      '',
    )
    const forged = `${head}.${forgedClaims.replace(/\+/g, '-').replace(/\//g, '_')}.${sig}`
    expect(
      errorOf(
        await page.call('otp_login', {
          verificationToken: forged,
          publicKey: key.publicKey,
          client_signature: key.signRaw(forged),
        }),
      ),
    ).toEqual({
      status: 401,
      errorCode: 'VERIFICATION_TOKEN_INVALID',
    })
    const late = await verifiedEmail(h, page, 'cy@example.com')
    h.clock.advance(601_000)
    expect(
      errorOf(
        await page.call('otp_login', {
          verificationToken: late.verificationToken,
          publicKey: late.key.publicKey,
          client_signature: late.key.signRaw(late.verificationToken),
        }),
      ),
    ).toEqual({ status: 401, errorCode: 'VERIFICATION_TOKEN_INVALID' })
  })

  it('logs in only where an account exists, and signs up only with a proven, unused e-mail', async () => {
    const h = await createHarness()
    const page = browser(h)
    const { key, verificationToken } = await verifiedEmail(h, page, 'dan@example.com')
    expect(
      errorOf(
        await page.call('otp_login', {
          verificationToken,
          publicKey: key.publicKey,
          client_signature: key.signRaw(verificationToken),
        }),
      ),
    ).toEqual({ status: 404, errorCode: 'ACCOUNT_NOT_FOUND' })
    expect(
      errorOf(
        await page.call('otp_login', {
          verificationToken,
          publicKey: key.publicKey,
          client_signature: key.signRaw(verificationToken),
          organizationId: h.organizationId,
        }),
      ),
    ).toEqual({ status: 403, errorCode: 'PERMISSION_DENIED' })
    expect(
      errorOf(
        await page.call('signup', {
          userEmail: 'dan@example.com',
          authenticators: [softPasskey().register()],
        }),
      ),
    ).toEqual({
      status: 401,
      errorCode: 'VERIFICATION_TOKEN_INVALID',
    })
    expect(
      errorOf(
        await page.call('signup', {
          userEmail: 'someone@example.com',
          verificationToken,
          clientSignature: key.signRaw(verificationToken),
        }),
      ),
    ).toEqual({
      status: 401,
      errorCode: 'VERIFICATION_TOKEN_INVALID',
    })
    expect(errorOf(await page.call('signup', {}))).toEqual({ status: 400, errorCode: 'FIELD_REQUIRED' })
    const dan = {
      userEmail: 'dan@example.com',
      verificationToken,
      clientSignature: key.signRaw(verificationToken),
    }
    expect((await page.call('signup', dan)).status).toBe(200)
    expect(errorOf(await page.call('signup', dan))).toEqual({
      status: 409,
      errorCode: 'ALREADY_EXISTS',
    })
  })
})

describe('auth proxy: SMS OTP', () => {
  it('signs up and logs in with a phone number', async () => {
    const h = await createHarness()
    const page = browser(h)
    const phone = '+447911123456'
    const key = clientKey()
    const init = await page.call('otp_init', { otpType: 'OTP_TYPE_SMS', contact: phone })
    const message = await lastCode(h, phone)
    expect(message).toMatchObject({ otpType: 'OTP_TYPE_SMS', subject: '', contact: phone })
    expect((message as unknown as { body: string }).body).toContain(message.code)
    const verify = await page.call('otp_verify', {
      otpId: init.body.otpId,
      otpCode: message.code,
      publicKey: key.publicKey,
    })
    const verificationToken = verify.body.verificationToken
    expect((await page.call('account', { filterType: 'PHONE_NUMBER', filterValue: phone })).body).toEqual({
      organizationId: null,
    })
    const signup = await page.call('signup', {
      userName: 'Phone user',
      userPhoneNumber: phone,
      verificationToken,
      clientSignature: key.signRaw(verificationToken),
    })
    expect(signup.status).toBe(200)
    expect((await settings(h, { sessionExpirationSeconds: '1800' })).status).toBe(200)
    const login = await page.call('otp_login', {
      verificationToken,
      publicKey: key.publicKey,
      client_signature: key.signRaw(verificationToken),
    })
    expect(login.status).toBe(200)
    expect(page.trips).toBe(5)
    expect(decodeJwtClaims<SessionClaims>(login.body.session)).toMatchObject({
      organization_id: signup.body.organizationId,
      exp: Math.floor(h.clock.now() / 1000) + 1800,
    })
    expect((await page.call('account', { filterType: 'PHONE_NUMBER', filterValue: phone })).body).toEqual({
      organizationId: signup.body.organizationId,
    })
  })
})

/** The dev IdP at `issuer` as an app's own OAuth provider in its auth-proxy settings. */
const devIdpProvider = (issuer: string) => ({
  issuer,
  authorizationEndpoint: `${issuer}/authorize`,
  tokenEndpoint: `${issuer}/token`,
  jwksUri: `${issuer}/jwks`,
})

/** Drives the dev IdP's authorize page the way a person in a browser would. */
async function authorizeAtDevIdp(
  h: Harness,
  endpoint: string,
  params: Record<string, string>,
  email: string,
) {
  const url = new URL(endpoint)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  const form = await h.service.app.request(`${url.pathname}${url.search}`)
  expect(form.status).toBe(200)
  const html = await form.text()
  const fields = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
  )
  const post = await h.service.app.request(url.pathname, {
    method: 'POST',
    body: new URLSearchParams({ ...fields, email, name: 'Grace', action: 'continue' }),
  })
  expect(post.status).toBe(302)
  const back = new URL(post.headers.get('location')!)
  expect(back.searchParams.get('state')).toBe(params.state)
  return back.searchParams.get('code')!
}

describe('auth proxy: OAuth through the dev identity provider', () => {
  const verifier = 'verifier-'.repeat(5)
  const redirectUri = `${APP}/oauth/callback`

  async function oauthStart(
    h: Harness,
    page: Awaited<ReturnType<typeof browser>>,
    key: Awaited<ReturnType<typeof clientKey>>,
    nonce = oidcNonce(key.publicKey),
  ) {
    const config = await page.call('wallet_kit_config')
    const code = await authorizeAtDevIdp(
      h,
      config.body.oauthAuthorizationEndpoints.google,
      {
        response_type: 'code',
        client_id: config.body.oauthClientIds.google,
        redirect_uri: redirectUri,
        state: 'xyz',
        nonce,
        code_challenge: s256Challenge(verifier),
        code_challenge_method: 'S256',
        scope: 'openid email profile',
      },
      'grace@example.com',
    )
    return { code, clientId: config.body.oauthClientIds.google as string }
  }

  it('signs up and logs in with Google, then refuses a replayed token', async () => {
    const h = await createHarness()
    const page = browser(h)
    const key = clientKey()
    const { code, clientId } = await oauthStart(h, page, key)
    const auth = await page.call('oauth2_authenticate', {
      provider: 'OAUTH2_PROVIDER_GOOGLE',
      authCode: code,
      redirectUri,
      codeVerifier: verifier,
      nonce: oidcNonce(key.publicKey),
      clientId,
    })
    expect(auth.status).toBe(200)
    const oidcToken = auth.body.oidcToken
    expect(decodeJwtClaims(oidcToken)).toMatchObject({
      iss: 'https://latchkey.invalid/oidc',
      aud: clientId,
      email: 'grace@example.com',
      nonce: oidcNonce(key.publicKey),
      provider: 'OAUTH2_PROVIDER_GOOGLE',
    })
    expect((await page.call('account', { filterType: 'OIDC_TOKEN', filterValue: oidcToken })).body).toEqual({
      organizationId: null,
    })
    const signup = await page.call('signup', {
      userName: 'Grace',
      userEmail: 'grace@example.com',
      oauthProviders: [{ providerName: 'google', oidcToken }],
    })
    expect(signup.status).toBe(200)
    expect((await page.call('account', { filterType: 'OIDC_TOKEN', filterValue: oidcToken })).body).toEqual({
      organizationId: signup.body.organizationId,
    })
    const login = await page.call('oauth_login', {
      oidcToken,
      publicKey: key.publicKey,
      invalidateExisting: false,
    })
    expect(login.status).toBe(200)
    // wallet_kit_config + oauth2_authenticate + account + signup + account + oauth_login (+ the IdP page).
    expect(page.trips).toBe(6)
    expect(decodeJwtClaims<SessionClaims>(login.body.session)).toMatchObject({
      user_id: signup.body.userId,
      organization_id: signup.body.organizationId,
      public_key: key.publicKey,
    })
    expect(await whoami(h, key.stamper(), signup.body.organizationId)).toMatchObject({
      userId: signup.body.userId,
    })
    expect(errorOf(await page.call('oauth_login', { oidcToken, publicKey: key.publicKey }))).toEqual({
      status: 401,
      errorCode: 'OIDC_TOKEN_REPLAYED',
    })
    // The same Google account cannot sign up twice.
    const other = clientKey()
    const next = await oauthStart(h, page, other)
    const token2 = (
      await page.call('oauth2_authenticate', {
        provider: 'OAUTH2_PROVIDER_GOOGLE',
        authCode: next.code,
        redirectUri,
        codeVerifier: verifier,
        nonce: oidcNonce(other.publicKey),
        clientId,
      })
    ).body.oidcToken
    expect(
      errorOf(await page.call('signup', { oauthProviders: [{ providerName: 'google', oidcToken: token2 }] })),
    ).toEqual({
      status: 409,
      errorCode: 'ALREADY_EXISTS',
    })
    // A login for another key than the token's nonce names.
    expect(
      errorOf(await page.call('oauth_login', { oidcToken: token2, publicKey: clientKey().publicKey })),
    ).toEqual({
      status: 401,
      errorCode: 'NONCE_MISMATCH',
    })
    // oauth_login forwards sessionProfileId too: the session lives the app profile's 60 s.
    const { sessionProfileId } = resultOf(
      'create_session_profile',
      await h.submit('create_session_profile', {
        sessionProfileName: 'short',
        scope: 'true',
        expirationSeconds: '60',
      }),
    )
    const confined = await page.call('oauth_login', {
      oidcToken: token2,
      publicKey: other.publicKey,
      sessionProfileId,
    })
    expect(confined.status).toBe(200)
    expect(decodeJwtClaims<SessionClaims>(confined.body.session).exp).toBe(
      Math.floor(h.clock.now() / 1000) + 60,
    )
  })

  it('refuses a bad PKCE verifier and an ID token whose nonce is not the request nonce', async () => {
    const h = await createHarness()
    const page = browser(h)
    const key = clientKey()
    const first = await oauthStart(h, page, key)
    const authenticate = (authCode: string, more: Record<string, string> = {}) =>
      page.call('oauth2_authenticate', {
        provider: 'OAUTH2_PROVIDER_GOOGLE',
        authCode,
        redirectUri,
        codeVerifier: verifier,
        nonce: oidcNonce(key.publicKey),
        clientId: first.clientId,
        ...more,
      })
    const pkce = await authenticate(first.code, { codeVerifier: 'x'.repeat(43) })
    expect(pkce.status).toBe(400)
    expect(pkce.body.details).toEqual({
      errorCode: 'PKCE_INVALID',
      field: 'parameters.codeVerifier',
      providerError: 'invalid_grant',
    })
    const second = await oauthStart(h, page, key, oidcNonce('another key'))
    expect(errorOf(await authenticate(second.code))).toEqual({ status: 401, errorCode: 'NONCE_MISMATCH' })
    expect(errorOf(await authenticate('made-up'))).toEqual({
      status: 401,
      errorCode: 'OAUTH_EXCHANGE_FAILED',
    })
  })
})

describe('auth proxy: OAuth against configured (non-dev) endpoints', () => {
  it('exchanges at the configured token endpoint and verifies with the configured JWKS and issuer', async () => {
    // A "real" provider at http://idp.test, reached through the service's outgoing fetch.
    let app: Harness['service']['app'] | undefined
    const calls: string[] = []
    const h = await createHarness({
      fetch: (input, init) => {
        const url = new URL(String(input))
        calls.push(`${init?.method ?? 'GET'} ${url.href}`)
        return Promise.resolve(app!.request(url.href, init))
      },
    })
    app = h.service.app
    const issuer = 'http://idp.test/dev/oidc/discord'
    const updated = await settings(h, {
      oauth: {
        clientIds: { discord: 'discord-app-1' },
        providers: { discord: devIdpProvider(issuer) },
      },
    })
    expect(updated.status).toBe(200)
    const page = browser(h)
    const config = await page.call('wallet_kit_config')
    expect(config.body.oauthAuthorizationEndpoints.discord).toBe(`${issuer}/authorize`)
    expect(config.body.oauthClientIds.discord).toBe('discord-app-1')
    const key = clientKey()
    const verifier = 'w'.repeat(50)
    const code = await authorizeAtDevIdp(
      h,
      config.body.oauthAuthorizationEndpoints.discord,
      {
        response_type: 'code',
        client_id: 'discord-app-1',
        redirect_uri: `${APP}/cb`,
        state: 'st',
        nonce: oidcNonce(key.publicKey),
        code_challenge: s256Challenge(verifier),
        code_challenge_method: 'S256',
      },
      'hal@example.com',
    )
    const auth = await page.call('oauth2_authenticate', {
      provider: 'OAUTH2_PROVIDER_DISCORD',
      authCode: code,
      redirectUri: `${APP}/cb`,
      codeVerifier: verifier,
      nonce: oidcNonce(key.publicKey),
      clientId: 'discord-app-1',
    })
    expect(auth.status).toBe(200)
    expect(calls).toEqual([`POST ${issuer}/token`, `GET ${issuer}/jwks`])
    expect(decodeJwtClaims(auth.body.oidcToken)).toMatchObject({
      idp_iss: issuer,
      provider: 'OAUTH2_PROVIDER_DISCORD',
    })
  })
})

describe('auth proxy: passkeys and external wallets', () => {
  it('signs up with a passkey (attestation verified) and logs in with stamp_login', async () => {
    const h = await createHarness()
    const page = browser(h)
    const passkey = softPasskey({ origin: APP })
    const sessionKey = clientKey()
    const signup = await page.call('signup', {
      userName: 'Passkey user',
      authenticators: [passkey.register()],
      // The kit registers its session key in the same call: no second passkey prompt.
      apiKeys: [
        {
          apiKeyName: 'session',
          publicKey: sessionKey.publicKey,
          curveType: 'API_KEY_CURVE_P256',
          expirationSeconds: '900',
        },
      ],
    })
    expect(signup.status).toBe(200)
    expect(await whoami(h, sessionKey.stamper(), signup.body.organizationId)).toMatchObject({
      userId: signup.body.userId,
    })
    const found = await page.call('account', {
      filterType: 'CREDENTIAL_ID',
      filterValue: passkey.credentialId,
    })
    expect(found.body).toEqual({ organizationId: signup.body.organizationId })
    const key = clientKey()
    const login = await h.submit(
      'stamp_login',
      { publicKey: key.publicKey },
      { as: passkey, organizationId: signup.body.organizationId },
    )
    const { session } = resultOf('stamp_login', login)
    expect(decodeJwtClaims<SessionClaims>(session)).toMatchObject({
      user_id: signup.body.userId,
      public_key: key.publicKey,
    })
    // Naming the parent organization (the kit does not know the sub-organization before the
    // passkey answers) logs in to the credential's sub-organization.
    const viaParent = await h.submit('stamp_login', { publicKey: clientKey().publicKey }, { as: passkey })
    expect(viaParent.body.activity.organizationId).toBe(signup.body.organizationId)
    expect(decodeJwtClaims<SessionClaims>(resultOf('stamp_login', viaParent).session)).toMatchObject({
      user_id: signup.body.userId,
      organization_id: signup.body.organizationId,
    })
    // Other activities still refuse a sub-organization key acting in the parent.
    const denied = await h.submit('create_wallet', { walletName: 'w', accounts: [] }, { as: passkey })
    expect(denied.status).toBe(403)
    // A tampered attestation is refused.
    const bad = softPasskey({ origin: APP }).register()
    bad.attestation.clientDataJson = bad.attestation.clientDataJson.slice(0, -4)
    expect(errorOf(await page.call('signup', { authenticators: [bad] }))).toEqual({
      status: 400,
      errorCode: 'ATTESTATION_INVALID',
    })
  })

  it('signs up with an Ethereum (EIP-191) or Solana key and logs in with its stamp', async () => {
    for (const scheme of [
      'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191',
      'SIGNATURE_SCHEME_TK_API_ED25519',
    ] as const) {
      const h = await createHarness()
      const page = browser(h)
      const wallet = testKey(scheme)
      const signup = await page.call('signup', {
        userName: 'Wallet user',
        apiKeys: [wallet.apiKey('Wallet')],
        wallet: { walletName: 'Main', accounts: [], mnemonicLength: 12 },
      })
      expect(signup.status).toBe(200)
      const found = await page.call('account', { filterType: 'PUBLIC_KEY', filterValue: wallet.publicKey })
      expect(found.body).toEqual({ organizationId: signup.body.organizationId })
      const key = clientKey()
      const login = await h.submit(
        'stamp_login',
        { publicKey: key.publicKey },
        // The wallet's stamp names the parent organization; the service finds the sub-organization.
        { as: wallet },
      )
      expect(decodeJwtClaims<SessionClaims>(resultOf('stamp_login', login).session)).toMatchObject({
        organization_id: signup.body.organizationId,
        user_id: signup.body.userId,
      })
    }
  })
})

describe('auth proxy: configuration, origins and methods', () => {
  it('answers wallet_kit_config from the configuration', async () => {
    const h = await createHarness()
    const page = browser(h)
    const reply = await page.call('wallet_kit_config')
    expect(reply.body).toEqual({
      enabledProviders: ['email', 'sms', 'passkey', 'wallet', 'google', 'apple', 'facebook', 'x', 'discord'],
      sessionExpirationSeconds: '900',
      organizationId: h.organizationId,
      oauthClientIds: {
        google: 'latchkey-dev-google',
        apple: 'latchkey-dev-apple',
        facebook: 'latchkey-dev-facebook',
        x: 'latchkey-dev-x',
        discord: 'latchkey-dev-discord',
      },
      oauthRedirectUrl: '',
      oauthAuthorizationEndpoints: {
        google: 'http://localhost/dev/oidc/google/authorize',
        apple: 'http://localhost/dev/oidc/apple/authorize',
        facebook: 'http://localhost/dev/oidc/facebook/authorize',
        x: 'http://localhost/dev/oidc/x/authorize',
        discord: 'http://localhost/dev/oidc/discord/authorize',
      },
      // The local service is a development service: the kit's code step links to its outbox.
      devOutboxUrl: 'http://localhost/dev/outbox',
      // The published fields: the codes the service sends, so a kit renders the right code step.
      otpLength: '6',
      otpAlphanumeric: false,
    })
    expect((await settings(h, { otpLength: 8, otpAlphabet: 'alphanumeric' })).status).toBe(200)
    expect((await page.call('wallet_kit_config')).body).toMatchObject({
      otpLength: '8',
      otpAlphanumeric: true,
    })
    expect(
      (await settings(h, { enabledProviders: ['google', 'email'], sessionExpirationSeconds: '3600' })).status,
    ).toBe(200)
    expect((await page.call('wallet_kit_config')).body).toMatchObject({
      enabledProviders: ['email', 'google'],
      sessionExpirationSeconds: '3600',
      oauthClientIds: { google: 'latchkey-dev-google' },
    })
  })

  it('refuses a missing or unknown configuration id and a disabled proxy', async () => {
    const h = await createHarness()
    const page = browser(h)
    const missing = await page.call('wallet_kit_config', {}, { configId: null })
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({
      code: 3,
      message: `the ${PROXY_CONFIG_HEADER} header is required`,
      details: { errorCode: 'PROXY_CONFIG_MISSING' },
    })
    expect(errorOf(await page.call('wallet_kit_config', {}, { configId: 'nope' }))).toEqual({
      status: 404,
      errorCode: 'PROXY_CONFIG_NOT_FOUND',
    })
    expect(errorOf(await page.call('nothing'))).toEqual({ status: 404, errorCode: 'ROUTE_NOT_FOUND' })
    await settings(h, { enabled: false })
    const off = await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'a@b.io' })
    expect(errorOf(off)).toEqual({ status: 412, errorCode: 'PROXY_DISABLED' })
    await settings(h, { enabled: true })
    expect((await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'a@b.io' })).status).toBe(200)
  })

  it('checks the Origin: foreign origins get a 403 and no CORS grant, preflights likewise', async () => {
    const h = await createHarness()
    const page = browser(h)
    await settings(h, { allowedOrigins: [APP, 'https://shop.example'] })
    const ok = await page.call('wallet_kit_config')
    expect(ok.status).toBe(200)
    expect(ok.headers.get('access-control-allow-origin')).toBe(APP)
    const foreign = await page.call('wallet_kit_config', {}, { origin: 'http://evil.test' })
    expect(errorOf(foreign)).toEqual({ status: 403, errorCode: 'ORIGIN_NOT_ALLOWED' })
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull()
    expect(errorOf(await page.call('wallet_kit_config', {}, { origin: null }))).toEqual({
      status: 403,
      errorCode: 'ORIGIN_NOT_ALLOWED',
    })
    const preflight = (origin: string) =>
      h.service.app.request('/v1/otp_init', {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'content-type, x-auth-proxy-config-id',
        },
      })
    const good = await preflight('https://shop.example')
    expect(good.status).toBe(204)
    expect(Object.fromEntries([...good.headers].filter(([k]) => k.startsWith('access-control')))).toEqual({
      'access-control-allow-origin': 'https://shop.example',
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': CORS_ALLOWED_HEADERS.join(', '),
      'access-control-max-age': '600',
    })
    const bad = await preflight('http://evil.test')
    expect(bad.status).toBe(403)
    expect(bad.headers.get('access-control-allow-origin')).toBeNull()
    // Errors for an allowed origin stay readable by the page.
    const error = await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'x' })
    expect(error.status).toBe(400)
    expect(error.headers.get('access-control-allow-origin')).toBe(APP)
  })

  it('refuses sign-in methods the configuration does not enable', async () => {
    const h = await createHarness()
    const page = browser(h)
    await settings(h, { enabledProviders: ['email'] })
    const sms = await page.call('otp_init', { otpType: 'OTP_TYPE_SMS', contact: '+447911123456' })
    expect(sms.status).toBe(403)
    expect(sms.body.details).toEqual({ errorCode: 'METHOD_DISABLED', method: 'sms' })
    expect(
      errorOf(
        await page.call('oauth2_authenticate', {
          provider: 'OAUTH2_PROVIDER_GOOGLE',
          authCode: 'c',
          redirectUri: APP,
          codeVerifier: 'v'.repeat(43),
          nonce: oidcNonce('k'),
          clientId: 'c',
        }),
      ),
    ).toEqual({ status: 403, errorCode: 'METHOD_DISABLED' })
    expect(errorOf(await page.call('signup', { authenticators: [softPasskey().register()] }))).toEqual({
      status: 403,
      errorCode: 'METHOD_DISABLED',
    })
    expect(errorOf(await page.call('signup', { apiKeys: [testKey().apiKey()] }))).toEqual({
      status: 403,
      errorCode: 'METHOD_DISABLED',
    })
    // A session key alone is no way to sign up; beside an enabled method it is welcome.
    const sessionKey = testKey().apiKey('session', '900')
    expect(errorOf(await page.call('signup', { apiKeys: [sessionKey] }))).toEqual({
      status: 400,
      errorCode: 'FIELD_REQUIRED',
    })
    const ivy = await verifiedEmail(h, page, 'ivy@example.com')
    const ivyBody = {
      userEmail: 'ivy@example.com',
      verificationToken: ivy.verificationToken,
      apiKeys: [sessionKey],
    }
    expect(
      (await page.call('signup', { ...ivyBody, clientSignature: signupConsent(ivy.key, ivyBody) })).status,
    ).toBe(200)
    expect((await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'a@b.io' })).status).toBe(200)
  })
})

describe('the proxy user', () => {
  it('holds a sealed key and may do nothing but sign-in and sign-up', async () => {
    const h = await createHarness()
    const config = (await h.service.store.get('proxyConfigs', h.service.dev.authProxyConfigId!))!
    expect(config.sealedProxyPrivateKey).toMatch(/^v1\./)
    const privateKey = h.service.runtime.open(config.sealedProxyPrivateKey!)
    const proxyKey = testKey('SIGNATURE_SCHEME_TK_API_P256', privateKey)
    expect(JSON.stringify(await h.service.store.dump())).not.toContain(bytesToHex(privateKey))
    const organization = (await h.service.store.get('organizations', h.organizationId))!
    expect(organization.rootUserIds).not.toContain(config.proxyUserId)

    const page = browser(h)
    const { key, verificationToken } = await verifiedEmail(h, page, 'fay@example.com')
    const signup = await page.call('signup', {
      userEmail: 'fay@example.com',
      verificationToken,
      clientSignature: key.signRaw(verificationToken),
      wallet: { path: "m/44'/501'/0'/0'", curve: 'CURVE_ED25519' },
    })
    const sub = signup.body.organizationId
    const address = signup.body.addresses[0]
    // The seed's { path, curve } wallet: one account, a Solana address for ed25519.
    expect(signup.body.addresses).toEqual([expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)])
    const refused = async (
      path: Parameters<Harness['submit']>[0],
      parameters: Json,
      organizationId: string,
    ) => {
      const reply = await h.submit(path, parameters, { as: proxyKey, organizationId })
      expect({ path, status: reply.status, errorCode: reply.body.details?.errorCode }).toEqual({
        path,
        status: 403,
        errorCode: 'PERMISSION_DENIED',
      })
    }
    await refused('create_wallet', { walletName: 'x', accounts: [] }, h.organizationId)
    await refused('create_wallet', { walletName: 'x', accounts: [] }, sub)
    await refused(
      'sign_raw_payloads',
      {
        signWith: address,
        payloads: ['00'.repeat(32)],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      },
      sub,
    )
    await refused(
      'export_wallet',
      { walletId: signup.body.walletId, targetPublicKey: `04${'11'.repeat(64)}` },
      sub,
    )
    await refused('export_wallet_account', { address, targetPublicKey: `04${'11'.repeat(64)}` }, sub)
    await refused('create_api_keys', { userId: signup.body.userId, apiKeys: [testKey().apiKey()] }, sub)
    await refused('stamp_login', { publicKey: clientKey().publicKey }, sub)
    await refused('create_user_tag', { userTagName: 't', userIds: [] }, h.organizationId)
    await refused('delete_api_keys', { userId: config.proxyUserId, apiKeyIds: [] }, h.organizationId)
    for (const [path, organizationId] of [
      ['list_wallets', sub],
      ['list_users', h.organizationId],
      ['list_wallet_accounts', sub],
      ['whoami', h.organizationId],
    ] as const) {
      const reply = await h.query(path, { organizationId }, { as: proxyKey })
      expect({ path, status: reply.status }).toEqual({ path, status: 403 })
    }
    expect((await h.query('list_suborgs', {}, { as: proxyKey })).status).toBe(200)
  })
})

describe('operator settings API', () => {
  it('reads and updates the configuration, stamped by a root user of the parent organization', async () => {
    const h = await createHarness()
    const body = JSON.stringify({ organizationId: h.organizationId, timestampMs: String(h.clock.now()) })
    const [header, value] = h.root.stamp(body)
    const got = await h.post(SETTINGS_ROUTES.get, body, { [header]: value })
    expect(got.status).toBe(200)
    expect(got.body).toMatchObject({
      organizationId: h.organizationId,
      authProxyConfigId: h.service.dev.authProxyConfigId,
      proxyUserId: expect.any(String),
      settings: { enabled: true, allowedOrigins: ['*'], sessionExpirationSeconds: '900' },
    })
    const updated = await settings(h, {
      allowedOrigins: ['https://app.example'],
      emailTemplate: { subject: 'Code for {{appName}}', body: 'Use {{code}}' },
      smsTemplate: { body: '{{code}}!' },
      oauth: { redirectUrl: 'https://app.example/cb', clientIds: { google: 'g-123' } },
    })
    expect(updated.status).toBe(200)
    expect(updated.body.settings).toMatchObject({
      allowedOrigins: ['https://app.example'],
      emailTemplate: { subject: 'Code for {{appName}}', body: 'Use {{code}}' },
      oauth: { redirectUrl: 'https://app.example/cb', clientIds: { google: 'g-123' } },
    })
    const page = browser(h, 'https://app.example')
    await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'tpl@example.com' })
    expect(await lastCode(h, 'tpl@example.com')).toMatchObject({ subject: 'Code for Latchkey Dev' })
    await page.call('otp_init', { otpType: 'OTP_TYPE_SMS', contact: '+447911123456' })
    const sms = (await lastCode(h, '+447911123456')) as unknown as { code: string; body: string }
    expect(sms.body).toBe(`${sms.code}!`)
  })

  it('refuses bad settings, missing stamps, sub-organization keys and non-root users', async () => {
    const h = await createHarness()
    expect((await settings(h, { allowedOrigins: ['https://app.example/path'] })).body.details).toMatchObject({
      errorCode: 'FIELD_INVALID',
      field: 'settings.allowedOrigins',
    })
    expect((await settings(h, { enabledProviders: ['myspace'] })).body.details.errorCode).toBe('ENUM_INVALID')
    expect((await settings(h, { sessionExpirationSeconds: '5' })).body.details.field).toBe(
      'settings.sessionExpirationSeconds',
    )
    const unstamped = await h.post(
      SETTINGS_ROUTES.update,
      JSON.stringify({ organizationId: h.organizationId, settings: {} }),
    )
    expect(unstamped.status).toBe(401)
    const sub = await h.createSubOrganization()
    const fromSub = await settings(h, { enabled: false }, sub.keys[0]!, sub.organizationId)
    expect(fromSub.body.details.errorCode).toBe('PERMISSION_DENIED')
    const foreign = await settings(h, { enabled: false }, sub.keys[0]!)
    expect(foreign.status).toBe(403)
    const config = (await h.service.store.get('proxyConfigs', h.service.dev.authProxyConfigId!))!
    const proxyKey = testKey(
      'SIGNATURE_SCHEME_TK_API_P256',
      h.service.runtime.open(config.sealedProxyPrivateKey!),
    )
    expect((await settings(h, { enabled: false }, proxyKey)).status).toBe(403)
    expect((await h.service.store.get('proxyConfigs', config.id))!.enabled).toBe(true)
  })
})

describe('sign-in state at rest', () => {
  it('keeps OTP attempts across restarts and drops day-old records at start-up', async () => {
    const store = await openMemoryStore()
    const masterKey = crypto.getRandomValues(new Uint8Array(32))
    const clock = fakeClock()
    const h = await createHarness({ store, masterKey, clock })
    const page = browser(h)
    const init = await page.call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'kim@example.com' })
    const { code } = await lastCode(h, 'kim@example.com')
    const wrong = code === '000000' ? '111111' : '000000'
    expect((await page.call('otp_verify', { otpId: init.body.otpId, otpCode: wrong })).status).toBe(400)
    expect((await store.get('pluginRows', `otp:${init.body.otpId}`))?.data).toMatchObject({
      attempts: 1,
      status: 'pending',
    })
    expect(JSON.stringify(await store.dump())).not.toContain(`"${code}"`)
    // Same store and key: the configuration, its proxy user and the OTP survive a restart.
    const again = await createHarness({ store, masterKey, clock })
    expect(again.service.dev.authProxyConfigId).toBe(h.service.dev.authProxyConfigId)
    expect(await store.get('pluginRows', `otp:${init.body.otpId}`)).toBeDefined()
    clock.advance(25 * 3600 * 1000)
    await createHarness({ store, masterKey, clock })
    expect(await store.get('pluginRows', `otp:${init.body.otpId}`)).toBeUndefined()
  })
})

describe('switching the proxy on', () => {
  it('creates the proxy user and its sealed key for a parent organization that had none', async () => {
    const h = await createHarness()
    const operator = testKey()
    const now = h.clock.now()
    const ids = { org: 'org-acme', user: 'user-acme', key: 'key-acme' }
    await h.service.store.transaction(async (tx) => {
      await tx.put('organizations', {
        id: ids.org,
        name: 'Acme',
        rootUserIds: [ids.user],
        rootQuorumThreshold: 1,
        createdAt: now,
        updatedAt: now,
      })
      await tx.put('users', {
        id: ids.user,
        organizationId: ids.org,
        userName: 'Operator',
        createdAt: now,
        updatedAt: now,
      })
      await tx.put('apiKeys', {
        id: ids.key,
        organizationId: ids.org,
        userId: ids.user,
        name: 'operator',
        publicKey: operator.publicKey,
        keyInOrganization: apiKeyInOrganization(operator.publicKey, ids.org),
        curve: 'API_KEY_CURVE_P256',
        credentialType: 'CREDENTIAL_TYPE_API_KEY_P256',
        createdAt: now,
        updatedAt: now,
      })
    })
    const read = JSON.stringify({ organizationId: ids.org, timestampMs: String(now) })
    const before = await h.post(SETTINGS_ROUTES.get, read, Object.fromEntries([operator.stamp(read)]))
    expect(before.body).toMatchObject({
      authProxyConfigId: null,
      proxyUserId: null,
      settings: { enabled: false },
    })

    const on = await settings(
      h,
      { enabled: true, allowedOrigins: ['https://acme.example'] },
      operator,
      ids.org,
    )
    expect(on.status).toBe(200)
    const config = (await h.service.store.get('proxyConfigs', on.body.authProxyConfigId))!
    expect(config).toMatchObject({ organizationId: ids.org, enabled: true, proxyUserId: on.body.proxyUserId })
    const proxyUser = (await h.service.store.get('users', config.proxyUserId!))!
    expect(proxyUser).toMatchObject({ organizationId: ids.org, userName: 'Auth Proxy' })
    const [proxyApiKey] = await h.service.store.findBy('apiKeys', 'userId', proxyUser.id)
    const opened = h.service.runtime.open(config.sealedProxyPrivateKey!)
    expect(proxyApiKey!.publicKey).toBe(bytesToHex(p256.getPublicKey(opened, true)))
    expect(JSON.stringify(await h.service.store.dump())).not.toContain(bytesToHex(opened))

    // The new configuration serves its own origin and organization.
    const page = browser(h, 'https://acme.example')
    const kit = await page.call('wallet_kit_config', {}, { configId: config.id })
    expect(kit.body.organizationId).toBe(ids.org)
    const { verificationToken } = await (async () => {
      const init = await page.call(
        'otp_init',
        { otpType: 'OTP_TYPE_EMAIL', contact: 'amy@acme.example' },
        { configId: config.id },
      )
      const { code } = await lastCode(h, 'amy@acme.example')
      return (
        await page.call('otp_verify', { otpId: init.body.otpId, otpCode: code }, { configId: config.id })
      ).body
    })()
    const signup = await page.call(
      'signup',
      { userEmail: 'amy@acme.example', verificationToken },
      { configId: config.id },
    )
    expect(
      (await h.service.store.get('organizations', signup.body.organizationId))!.parentOrganizationId,
    ).toBe(ids.org)
    // The dev configuration does not see Acme's accounts.
    expect(
      (await browser(h).call('account', { filterType: 'EMAIL', filterValue: 'amy@acme.example' })).body,
    ).toEqual({
      organizationId: null,
    })

    // Off and on again keeps the same proxy user.
    await settings(h, { enabled: false }, operator, ids.org)
    expect(errorOf(await page.call('wallet_kit_config', {}, { configId: config.id }))).toEqual({
      status: 412,
      errorCode: 'PROXY_DISABLED',
    })
    const again = await settings(h, { enabled: true }, operator, ids.org)
    expect(again.body.proxyUserId).toBe(proxyUser.id)
  })
})

// Sign-in attacks by a caller holding a key of their own: a session confined by a session profile
// reaching the operator's auth-proxy settings, session lifetimes chosen by the caller (through the
// auth proxy and the activity API alike), and an OAuth code of another app's client id.

describe('a session confined by a session profile', () => {
  it("cannot change the auth proxy's settings, though its user is a root user of the parent", async () => {
    const h = await createHarness()
    const { sessionProfileId } = resultOf(
      'create_session_profile',
      await h.submit('create_session_profile', { sessionProfileName: 'agent', scope: 'true' }),
    )
    const scoped = testKey()
    resultOf('stamp_login', await h.submit('stamp_login', { publicKey: scoped.publicKey, sessionProfileId }))
    const before = (await h.service.store.get('proxyConfigs', h.service.dev.authProxyConfigId!))!
    // A profile's session never manages logins, sessions or the organization: the proxy's
    // settings (enabled methods, session lifetime, OAuth endpoints) are all three.
    const reply = await settings(h, { sessionExpirationSeconds: String(MAX_SESSION_SECONDS) }, scoped)
    expect([reply.status, reply.body.details?.errorCode]).toEqual([403, 'SESSION_SCOPE_DENIED'])
    expect((await h.service.store.get('proxyConfigs', before.id))!.settings).toEqual(before.settings)
    // The root user's own (unconfined) key still may.
    expect((await settings(h, { sessionExpirationSeconds: '1200' }, h.root)).status).toBe(200)
  })
})

describe('session lifetimes the caller asks for', () => {
  it('the activity API refuses a login longer than the longest session, negative or non-numeric, naming the field', async () => {
    const h = await createHarness()
    for (const expirationSeconds of [String(MAX_SESSION_SECONDS + 1), '-60', 'forever', '1e9']) {
      const reply = await h.submit('stamp_login', { publicKey: testKey().publicKey, expirationSeconds })
      expect([reply.status, reply.body.details?.field], String(expirationSeconds)).toEqual([
        400,
        'parameters.expirationSeconds',
      ])
    }
    const longest = await h.submit('stamp_login', {
      publicKey: testKey().publicKey,
      expirationSeconds: String(MAX_SESSION_SECONDS),
    })
    expect(longest.status).toBe(200)
  })

  it("the operator's ceiling cuts every login's session to it, a profile's too, and refuses a sign-up key past it", async () => {
    const h = await createHarness()
    const lifetime = (reply: Reply) => {
      const { exp, iat } = decodeJwtClaims<{ exp: number; iat: number }>(
        resultOf('stamp_login', reply).session,
      )
      return exp - iat
    }
    // A ceiling below the default a login gets when it asks for none is refused, naming the field
    // the update changed.
    const under = await settings(h, { maxSessionExpirationSeconds: '600' })
    expect([under.status, under.body.details?.field]).toEqual([400, 'settings.maxSessionExpirationSeconds'])
    expect(
      (await settings(h, { sessionExpirationSeconds: '300', maxSessionExpirationSeconds: '3600' })).status,
    ).toBe(200)
    const over = await settings(h, { sessionExpirationSeconds: '7200' })
    expect([over.status, over.body.details?.field]).toEqual([400, 'settings.sessionExpirationSeconds'])

    // A login asking for 30 days gets the ceiling, in the parent and in a sub-organization; one
    // asking for less gets what it asked.
    h.clock.advance(1)
    const longest = String(MAX_SESSION_SECONDS)
    expect(
      lifetime(await h.submit('stamp_login', { publicKey: testKey().publicKey, expirationSeconds: longest })),
    ).toBe(3600)
    const sub = await h.createSubOrganization()
    h.clock.advance(1)
    const asSub = { as: sub.keys[0]!, organizationId: sub.organizationId }
    const key = testKey()
    const cut = await h.submit('stamp_login', { publicKey: key.publicKey, expirationSeconds: longest }, asSub)
    expect(lifetime(cut)).toBe(3600)
    const [row] = (await h.service.store.findBy('apiKeys', 'userId', sub.userIds[0]!)).filter(
      (apiKey) => apiKey.publicKey === key.publicKey,
    )
    expect(row!.expirationSeconds).toBe('3600')
    h.clock.advance(1)
    expect(
      lifetime(
        await h.submit('stamp_login', { publicKey: testKey().publicKey, expirationSeconds: '120' }, asSub),
      ),
    ).toBe(120)
    // A session profile lasting a day is cut too.
    h.clock.advance(1)
    const { sessionProfileId } = resultOf(
      'create_session_profile',
      await h.submit('create_session_profile', {
        sessionProfileName: 'day',
        scope: 'true',
        expirationSeconds: '86400',
      }),
    )
    h.clock.advance(1)
    expect(
      lifetime(await h.submit('stamp_login', { publicKey: testKey().publicKey, sessionProfileId }, asSub)),
    ).toBe(3600)

    // Under a ceiling below an hour, a read-only session is cut to it too.
    expect((await settings(h, { maxSessionExpirationSeconds: '600' })).status).toBe(200)
    h.clock.advance(1)
    const readOnly = resultOf(
      'create_read_only_session',
      await h.submit('create_read_only_session', {}, asSub),
    )
    expect(Number(readOnly.sessionExpiry) - Math.floor(h.clock.now() / 1000)).toBe(600)
    h.clock.advance(1)
    expect(
      lifetime(
        await h.submit('stamp_login', { publicKey: testKey().publicKey, expirationSeconds: longest }, asSub),
      ),
    ).toBe(600)

    // The kit asks for what wallet_kit_config says; a sign-up bringing a longer session key is refused.
    const page = browser(h)
    expect((await page.call('wallet_kit_config')).body.sessionExpirationSeconds).toBe('300')
    const signup = await page.call('signup', {
      userName: 'Long session',
      apiKeys: [
        {
          apiKeyName: 'session',
          publicKey: testKey().publicKey,
          curveType: 'API_KEY_CURVE_P256',
          expirationSeconds: '7200',
        },
      ],
    })
    expect([signup.status, signup.body.details?.field]).toEqual([400, 'apiKeys[0].expirationSeconds'])
  })

  it('the auth proxy refuses them before any proof is spent, naming its own field', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    // The proxy routes by the token's claims before the activity verifies it; the lifetime is
    // judged before either looks at the proof.
    const part = (value: Json) => Buffer.from(JSON.stringify(value)).toString('base64url')
    const unverifiedToken = `${part({ alg: 'ES256' })}.${part({ verification_type: 'OTP_TYPE_EMAIL', contact: 'a@example.com' })}.c2ln`
    for (const expirationSeconds of [String(MAX_SESSION_SECONDS + 1), '-60', 'forever']) {
      const reply = await browser(h).call('otp_login', {
        verificationToken: unverifiedToken,
        publicKey: testKey().publicKey,
        organizationId: sub.organizationId,
        expirationSeconds,
      })
      expect([reply.status, reply.body.details?.field], expirationSeconds).toEqual([400, 'expirationSeconds'])
    }
  })
})

describe("an app's own OAuth provider (a public PKCE client)", () => {
  it("refuses a code issued to another app's client id (its subject would log in to this app's account); a token logs in once", async () => {
    // The provider at http://idp.test, reached through the service's outgoing fetch. Like Google
    // or Discord, it gives a person one subject whichever client they sign in to.
    let app: Harness['service']['app'] | undefined
    const h = await createHarness({
      fetch: (input, init) => Promise.resolve(app!.request(new URL(String(input)).href, init)),
    })
    app = h.service.app
    const issuer = 'http://idp.test/dev/oidc/discord'
    expect(
      (
        await settings(
          h,
          {
            oauth: {
              clientIds: { discord: 'this-app' },
              providers: { discord: devIdpProvider(issuer) },
            },
          },
          h.root,
        )
      ).status,
    ).toBe(200)
    const verifier = 'v'.repeat(50)
    const authenticate = async (clientId: string, publicKey: string) =>
      browser(h).call('oauth2_authenticate', {
        provider: 'OAUTH2_PROVIDER_DISCORD',
        authCode: await authorizeAtDevIdp(
          h,
          `${issuer}/authorize`,
          {
            response_type: 'code',
            client_id: clientId,
            redirect_uri: `${APP}/cb`,
            state: 'st',
            nonce: oidcNonce(publicKey),
            code_challenge: s256Challenge(verifier),
            code_challenge_method: 'S256',
          },
          'hal@example.com',
        ),
        redirectUri: `${APP}/cb`,
        codeVerifier: verifier,
        nonce: oidcNonce(publicKey),
        clientId,
      })
    // Hal's account, signed up through this app.
    const hal = testKey()
    const own = await authenticate('this-app', hal.publicKey)
    expect(own.status).toBe(200)
    const signup = await browser(h).call('signup', {
      userEmail: 'hal@example.com',
      oauthProviders: [{ providerName: 'discord', oidcToken: own.body.oidcToken }],
    })
    expect(signup.status).toBe(200)
    // Hal signs in to the attacker's app (its own client id at the same provider); the attacker
    // redeems that code here, with a key of their own.
    const attacker = testKey()
    const foreign = await authenticate('attacker-app', attacker.publicKey)
    expect([foreign.status, foreign.body.details?.errorCode, foreign.body.details?.field]).toEqual([
      401,
      'OAUTH_EXCHANGE_FAILED',
      'parameters.clientId',
    ])
    // An update naming another provider's client id keeps this one's (client ids are set one
    // provider at a time): the foreign code is still refused.
    expect((await settings(h, { oauth: { clientIds: { google: 'this-app-google' } } }, h.root)).status).toBe(
      200,
    )
    const afterUpdate = await authenticate('attacker-app', attacker.publicKey)
    expect([afterUpdate.status, afterUpdate.body.details?.field]).toEqual([401, 'parameters.clientId'])
    // Settings naming a provider without any client id for it (written by hand or an older
    // version) check against nothing: refused, naming the setting, not any client id accepted.
    await h.service.store.transaction(async (tx) => {
      const [row] = await tx.findBy('proxyConfigs', 'organizationId', h.organizationId)
      const { discord: _, ...clientIds } = row!.settings.oauth.clientIds
      await tx.put('proxyConfigs', {
        ...row!,
        settings: { ...row!.settings, oauth: { ...row!.settings.oauth, clientIds } },
      })
    })
    const unset = await authenticate('attacker-app', attacker.publicKey)
    expect([unset.status, unset.body.details?.field]).toEqual([401, 'parameters.clientId'])
    expect(unset.body.message).toContain('oauth.clientIds.discord')
    // Settings still naming the new configuration's placeholder bind no client: every code is
    // refused, naming the setting to fill in, rather than any client id accepted.
    const placeholder = await settings(
      h,
      { oauth: { clientIds: { discord: 'latchkey-dev-discord' } } },
      h.root,
    )
    expect(placeholder.status).toBe(200)
    for (const clientId of ['attacker-app', 'latchkey-dev-discord']) {
      const refused = await authenticate(clientId, attacker.publicKey)
      expect([refused.status, refused.body.details?.field], clientId).toEqual([401, 'parameters.clientId'])
      expect(refused.body.message).toContain('oauth.clientIds.discord')
    }
    // Hal's own token logs in once, however many logins race with it.
    const logins = await Promise.all(
      Array.from({ length: 10 }, () =>
        browser(h).call('oauth_login', { oidcToken: own.body.oidcToken, publicKey: hal.publicKey }),
      ),
    )
    expect(logins.filter((reply) => reply.status === 200)).toHaveLength(1)
    for (const reply of logins.filter((r) => r.status !== 200))
      expect([reply.status, reply.body.details?.errorCode]).toEqual([401, 'OIDC_TOKEN_REPLAYED'])
  })
})
