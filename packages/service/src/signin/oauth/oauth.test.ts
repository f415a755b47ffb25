import type { OAuth2Provider } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { Hono } from 'hono'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../../kernel/base/errors.ts'
import { createServiceOidc } from './createServiceOidc.ts'
import { createDevIdp, DEV_OIDC_PREFIX, devSubject } from './devIdp.ts'
import { exchangeAuthorizationCode, readOAuth2AuthenticateParams } from './exchangeAuthorizationCode.ts'
import { oidcNonce } from './oidcNonce.ts'
import { s256Challenge } from './pkce.ts'

const ORIGIN = 'http://localhost'
const serviceOidcFor = (key: Uint8Array, now?: () => number) =>
  createServiceOidc({ privateKey: () => key.slice(), publicKey: p256.getPublicKey(key), issuer: ORIGIN, now })
const REDIRECT = 'http://app.test/callback'
const CLIENT = 'dev-client-google'

function setup() {
  let time = Date.UTC(2026, 0, 1)
  const now = () => time
  const idp = createDevIdp({ now })
  const app = new Hono().route(DEV_OIDC_PREFIX, idp.app)
  const serviceOidc = serviceOidcFor(p256.utils.randomSecretKey(), now)
  const ctx = {
    fetch: (url: string, init: RequestInit) => app.request(url, init),
    endpointsFor: (provider: OAuth2Provider) => {
      const issuer = idp.issuer(ORIGIN, provider.replace('OAUTH2_PROVIDER_', '').toLowerCase() as 'google')
      return { issuer, tokenEndpoint: `${issuer}/token`, jwksUri: `${issuer}/jwks` }
    },
    serviceOidc,
    organizationId: ORGANIZATION,
    now,
  }
  return {
    app,
    ctx,
    serviceOidc,
    advance: (ms: number) => {
      time += ms
    },
  }
}

/** The top-level organization whose settings named the provider in `setup`'s exchanges. */
const ORGANIZATION = 'org-operator-a'
const publicKey = bytesToHex(p256.getPublicKey(p256.utils.randomSecretKey(), true))
const nonce = oidcNonce(publicKey)
const verifier = 'v'.repeat(20) + bytesToHex(crypto.getRandomValues(new Uint8Array(16)))

/** Drives the authorize page as a browser would: GET the form, POST it, follow nothing. */
async function authorize(
  app: Hono,
  opts: { provider?: string; email?: string; challenge?: string; n?: string } = {},
) {
  const provider = opts.provider ?? 'google'
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT,
    redirect_uri: REDIRECT,
    state: 'st-1',
    nonce: opts.n ?? nonce,
    code_challenge: opts.challenge ?? s256Challenge(verifier),
    code_challenge_method: 'S256',
    login_hint: 'ada@example.com',
  })
  const form = await app.request(`/dev/oidc/${provider}/authorize?${query}`)
  expect(form.status).toBe(200)
  const html = await form.text()
  expect(html).toContain('value="ada@example.com"')
  const fields = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
  )
  const post = await app.request(`/dev/oidc/${provider}/authorize`, {
    method: 'POST',
    body: new URLSearchParams({
      ...fields,
      email: opts.email ?? 'Ada@Example.com',
      name: 'Ada',
      action: 'continue',
    }),
  })
  expect(post.status).toBe(302)
  const location = new URL(post.headers.get('location')!)
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
  expect(location.searchParams.get('state')).toBe('st-1')
  return location.searchParams.get('code')!
}

const params = (authCode: string, more: Record<string, string> = {}) =>
  readOAuth2AuthenticateParams({
    provider: 'OAUTH2_PROVIDER_GOOGLE',
    authCode,
    redirectUri: REDIRECT,
    codeVerifier: verifier,
    nonce,
    clientId: CLIENT,
    ...more,
  })

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ApiError)
  return { errorCode: (error as ApiError).errorCode, field: (error as ApiError).field }
}

function syncRefusal(fn: () => unknown) {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError)
    return (e as ApiError).errorCode
  }
  throw new Error('expected a refusal')
}

describe('dev OIDC identity provider', () => {
  it('publishes discovery and JWKS for each provider', async () => {
    const { app } = setup()
    for (const provider of ['google', 'apple', 'facebook', 'x', 'discord']) {
      const res = await app.request(`/dev/oidc/${provider}/.well-known/openid-configuration`)
      const issuer = `${ORIGIN}/dev/oidc/${provider}`
      expect(await res.json()).toMatchObject({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        code_challenge_methods_supported: ['S256'],
        id_token_signing_alg_values_supported: ['ES256'],
      })
    }
    const jwks = (await (await app.request('/dev/oidc/apple/jwks')).json()) as { keys: { kty: string }[] }
    expect(jwks.keys).toEqual([
      expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' }),
    ])
    expect((await app.request('/dev/oidc/myspace/jwks')).status).toBe(404)
  })

  it('refuses authorization requests without PKCE S256 or with a bad redirect', async () => {
    const { app } = setup()
    const base = {
      response_type: 'code',
      client_id: 'c',
      redirect_uri: REDIRECT,
      code_challenge: s256Challenge(verifier),
    }
    const ask = (q: Record<string, string>) =>
      app.request(`/dev/oidc/google/authorize?${new URLSearchParams(q)}`)
    expect((await ask({ ...base, code_challenge_method: 'plain' })).status).toBe(400)
    expect((await ask(base)).status).toBe(400)
    const bad = await ask({ ...base, code_challenge_method: 'S256', redirect_uri: 'javascript:alert(1)' })
    expect(bad.status).toBe(400)
    expect(bad.headers.get('location')).toBeNull()
    expect((await ask({ ...base, code_challenge_method: 'S256', response_type: 'token' })).status).toBe(400)
    expect((await ask({ ...base, code_challenge_method: 'S256' })).status).toBe(200)
  })

  it('sends the user back with access_denied on Cancel, and re-asks on a bad e-mail', async () => {
    const { app } = setup()
    const base = {
      response_type: 'code',
      client_id: 'c',
      redirect_uri: REDIRECT,
      code_challenge: s256Challenge(verifier),
      code_challenge_method: 'S256',
      state: 's',
    }
    const cancel = await app.request('/dev/oidc/x/authorize', {
      method: 'POST',
      body: new URLSearchParams({ ...base, action: 'cancel' }),
    })
    expect(cancel.headers.get('location')).toBe(
      `${REDIRECT}?error=access_denied&error_description=the+user+cancelled&state=s`,
    )
    const badEmail = await app.request('/dev/oidc/x/authorize', {
      method: 'POST',
      body: new URLSearchParams({ ...base, action: 'continue', email: 'nope' }),
    })
    expect(badEmail.status).toBe(400)
    expect(await badEmail.text()).toContain('role="alert"')
  })

  it('issues a single-use code for an ES256 ID token with a stable subject', async () => {
    const { app } = setup()
    const code = await authorize(app)
    const form = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: CLIENT,
      code_verifier: verifier,
    }
    const res = await app.request('/dev/oidc/google/token', {
      method: 'POST',
      body: new URLSearchParams(form),
    })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { id_token: string; token_type: string }
    expect(body.token_type).toBe('Bearer')
    expect(decodeProtectedHeader(body.id_token).alg).toBe('ES256')
    const iat = Math.floor(Date.UTC(2026, 0, 1) / 1000)
    expect(decodeJwt(body.id_token)).toEqual({
      iss: `${ORIGIN}/dev/oidc/google`,
      sub: devSubject('google', 'ada@example.com'),
      aud: CLIENT,
      email: 'ada@example.com',
      email_verified: true,
      name: 'Ada',
      nonce,
      iat,
      exp: iat + 600,
    })
    expect(devSubject('google', 'ada@example.com')).toMatch(/^\d{21}$/)
    expect(devSubject('google', 'ADA@example.com')).toBe(devSubject('google', 'ada@example.com'))
    expect(devSubject('apple', 'ada@example.com')).not.toBe(devSubject('google', 'ada@example.com'))
    const again = await app.request('/dev/oidc/google/token', {
      method: 'POST',
      body: new URLSearchParams(form),
    })
    expect(again.status).toBe(400)
    expect(await again.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'unknown or already used authorization code',
    })
  })
})

describe('exchangeAuthorizationCode (oauth2_authenticate)', () => {
  it('exchanges the code with PKCE and issues the service token carrying the nonce', async () => {
    const { app, ctx, serviceOidc } = setup()
    const code = await authorize(app)
    const { oidcToken, claims } = await exchangeAuthorizationCode(params(code), ctx)
    const iat = Math.floor(Date.UTC(2026, 0, 1) / 1000)
    expect(claims).toEqual({
      iss: ORIGIN,
      sub: devSubject('google', 'ada@example.com'),
      aud: CLIENT,
      nonce,
      provider: 'OAUTH2_PROVIDER_GOOGLE',
      idp_iss: `${ORIGIN}/dev/oidc/google`,
      org: ORGANIZATION,
      email: 'ada@example.com',
      email_verified: true,
      name: 'Ada',
      iat,
      exp: iat + 600,
      jti: expect.any(String),
    })
    expect(serviceOidc.verify(oidcToken, { id: ORGANIZATION })).toEqual(claims)
    // Accepted in the organization's sub-organizations too: they sign in with its settings.
    expect(serviceOidc.verify(oidcToken, { id: 'sub-1', parentOrganizationId: ORGANIZATION })).toEqual(claims)
  })

  it('a token is accepted only in the tree of the organization whose provider vouched for it', async () => {
    const { app, ctx, serviceOidc } = setup()
    const { oidcToken } = await exchangeAuthorizationCode(params(await authorize(app)), ctx)
    // Another operator's organization, and a sub-organization of it: each configures its own
    // provider (issuer and key set), so what one's provider vouched for proves nothing at the other.
    for (const organization of [
      { id: 'org-operator-b' },
      { id: 'sub-b', parentOrganizationId: 'org-operator-b' },
    ]) {
      let error: unknown
      try {
        serviceOidc.verify(oidcToken, organization, 'parameters.oidcToken')
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(ApiError)
      expect((error as ApiError).errorCode).toBe('OIDC_TOKEN_INVALID')
      expect((error as ApiError).field).toBe('parameters.oidcToken')
      expect((error as ApiError).message).toMatch(/another organization/)
    }
    // A token signed by the service before tokens named their organization is refused, naming why.
    const unbound = serviceOidc.issue({
      sub: 's',
      aud: 'a',
      nonce,
      provider: 'OAUTH2_PROVIDER_X',
      idp_iss: 'i',
    } as Parameters<typeof serviceOidc.issue>[0])
    expect(() => serviceOidc.verify(unbound.token, { id: ORGANIZATION })).toThrow(/names no organization/)
  })

  it('refuses a wrong PKCE verifier', async () => {
    const { app, ctx } = setup()
    const code = await authorize(app)
    expect(
      await refusal(exchangeAuthorizationCode(params(code, { codeVerifier: 'w'.repeat(43) }), ctx)),
    ).toEqual({
      errorCode: 'PKCE_INVALID',
      field: 'codeVerifier',
    })
    // The failed attempt spent the code.
    expect((await refusal(exchangeAuthorizationCode(params(code), ctx))).errorCode).toBe(
      'OAUTH_EXCHANGE_FAILED',
    )
  })

  it('refuses an ID token whose nonce is not the request nonce', async () => {
    const { app, ctx } = setup()
    const code = await authorize(app, { n: oidcNonce('someone else') })
    expect(await refusal(exchangeAuthorizationCode(params(code), ctx))).toEqual({
      errorCode: 'NONCE_MISMATCH',
      field: 'nonce',
    })
  })

  it('refuses an expired code, a foreign client id and another provider', async () => {
    const { app, ctx, advance } = setup()
    const expired = await authorize(app)
    advance(60_000)
    expect((await refusal(exchangeAuthorizationCode(params(expired), ctx))).errorCode).toBe(
      'OAUTH_EXCHANGE_FAILED',
    )
    const code = await authorize(app)
    expect(
      (await refusal(exchangeAuthorizationCode(params(code, { clientId: 'other' }), ctx))).errorCode,
    ).toBe('OAUTH_EXCHANGE_FAILED')
    const apple = await authorize(app, { provider: 'apple' })
    expect((await refusal(exchangeAuthorizationCode(params(apple), ctx))).errorCode).toBe(
      'OAUTH_EXCHANGE_FAILED',
    )
  })

  it('refuses an ID token signed by another key or for another issuer', async () => {
    const { app, ctx } = setup()
    const other = setup()
    const code = await authorize(other.app)
    // Token endpoint of the other IdP, JWKS of ours: the signature cannot verify.
    const mixed = {
      ...ctx,
      endpointsFor: (p: OAuth2Provider) => ({
        ...ctx.endpointsFor(p),
        tokenEndpoint: 'http://localhost/dev/oidc/google/token',
      }),
      fetch: (url: string, init: RequestInit) =>
        (url.endsWith('/token') ? other.app : app).request(url, init),
    }
    expect((await refusal(exchangeAuthorizationCode(params(code), mixed))).errorCode).toBe(
      'OIDC_TOKEN_INVALID',
    )
    const code2 = await authorize(app)
    const wrongIssuer = {
      ...ctx,
      endpointsFor: (p: OAuth2Provider) => ({
        ...ctx.endpointsFor(p),
        issuer: 'https://accounts.google.com',
      }),
    }
    expect((await refusal(exchangeAuthorizationCode(params(code2), wrongIssuer))).errorCode).toBe(
      'OIDC_TOKEN_INVALID',
    )
  })

  it('gives up on a provider that does not answer', async () => {
    const { ctx } = setup()
    const hanging = {
      ...ctx,
      timeoutMs: 50,
      fetch: (_url: string, init: RequestInit) =>
        new Promise<Response>((_, reject) =>
          init.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
        ),
    }
    const r = await refusal(exchangeAuthorizationCode(params('code'), hanging))
    expect(r.errorCode).toBe('OAUTH_EXCHANGE_FAILED')
  })

  it('validates parameters', () => {
    const call = (more: Record<string, unknown>) => {
      try {
        params('code', more as Record<string, string>)
      } catch (e) {
        return { errorCode: (e as ApiError).errorCode, field: (e as ApiError).field }
      }
    }
    expect(call({ provider: 'OAUTH2_PROVIDER_MYSPACE' })).toEqual({
      errorCode: 'ENUM_INVALID',
      field: 'provider',
    })
    expect(call({ codeVerifier: 'short' })).toEqual({ errorCode: 'PKCE_INVALID', field: 'codeVerifier' })
    expect(call({ nonce: 'xyz' })).toEqual({ errorCode: 'FIELD_INVALID', field: 'nonce' })
    expect(call({ clientId: '' })).toEqual({ errorCode: 'FIELD_REQUIRED', field: 'clientId' })
  })

  it('service tokens from another key or past expiry are refused', async () => {
    const { serviceOidc, advance } = setup()
    const other = serviceOidcFor(p256.utils.randomSecretKey())
    const forged = other.issue({
      sub: 's',
      aud: 'a',
      nonce,
      provider: 'OAUTH2_PROVIDER_X',
      idp_iss: 'i',
      org: ORGANIZATION,
    })
    expect(syncRefusal(() => serviceOidc.verify(forged.token, { id: ORGANIZATION }))).toBe(
      'OIDC_TOKEN_INVALID',
    )
    const real = serviceOidc.issue({
      sub: 's',
      aud: 'a',
      nonce,
      provider: 'OAUTH2_PROVIDER_X',
      idp_iss: 'i',
      org: ORGANIZATION,
    })
    expect(serviceOidc.verify(real.token, { id: ORGANIZATION }).sub).toBe('s')
    advance(601_000)
    expect(syncRefusal(() => serviceOidc.verify(real.token, { id: ORGANIZATION }))).toBe('OIDC_TOKEN_INVALID')
    expect(syncRefusal(() => serviceOidc.verify('abc', { id: ORGANIZATION }))).toBe('OIDC_TOKEN_INVALID')
  })
})
