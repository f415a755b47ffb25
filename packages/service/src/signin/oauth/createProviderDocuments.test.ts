import {
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  exportPKCS8,
  generateKeyPair,
  jwtVerify,
  SignJWT,
} from 'jose'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../../kernel/base/errors.ts'
import { APPLE_AUDIENCE, appleClientSecret } from './appleClientSecret.ts'
import { createOAuthProviders, OAuthConfigError } from './createOAuthProviders.ts'
import { cacheLifetimeMs, createProviderDocuments } from './createProviderDocuments.ts'

const ISSUER = 'https://idp.test'
const JWKS = `${ISSUER}/jwks`

async function signingKey(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } }
}

/** A provider's JWKS endpoint that counts its reads and serves whatever set and headers it is given. */
function jwksEndpoint() {
  const state = { keys: [] as object[], headers: {} as Record<string, string>, reads: 0, down: false }
  const fetch = async (url: string) => {
    if (url !== JWKS) return new Response('{}', { status: 404 })
    state.reads++
    if (state.down) throw new Error('connect ECONNREFUSED')
    return new Response(JSON.stringify({ keys: state.keys }), {
      headers: { 'content-type': 'application/json', ...state.headers },
    })
  }
  return { state, fetch }
}

const token = (key: { privateKey: CryptoKey }, kid: string, now: number) =>
  new SignJWT({ sub: 'ada' })
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuer(ISSUER)
    .setAudience('client')
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(Math.floor(now / 1000) + 600)
    .sign(key.privateKey)

describe('createProviderDocuments', () => {
  it('reads a cache lifetime from Cache-Control and Age', () => {
    const lifetime = (headers: Record<string, string>) => cacheLifetimeMs(new Response('', { headers }), 1234)
    expect(lifetime({})).toBe(1234)
    expect(lifetime({ 'cache-control': 'public, max-age=300' })).toBe(300_000)
    expect(lifetime({ 'cache-control': 'max-age=300', age: '100' })).toBe(200_000)
    expect(lifetime({ 'cache-control': 'no-store' })).toBe(0)
    expect(lifetime({ 'cache-control': 'no-cache, max-age=300' })).toBe(0)
    expect(lifetime({ 'cache-control': 'max-age=99999999' })).toBe(24 * 60 * 60 * 1000)
    expect(lifetime({ 'cache-control': 'max-age=soon' })).toBe(1234)
  })

  it('keeps a key set as long as its max-age says, then reads it again', async () => {
    let now = Date.UTC(2026, 0, 1)
    const a = await signingKey('a')
    const idp = jwksEndpoint()
    idp.state.keys = [a.jwk]
    idp.state.headers = { 'cache-control': 'max-age=120' }
    const docs = createProviderDocuments({ fetch: idp.fetch, now: () => now })
    const options = { issuer: ISSUER, audience: 'client', currentDate: new Date(now) }
    await docs.verify(await token(a, 'a', now), JWKS, options)
    await Promise.all([1, 2, 3].map(async () => docs.verify(await token(a, 'a', now), JWKS, options)))
    expect(idp.state.reads).toBe(1)
    now += 121_000
    await docs.verify(await token(a, 'a', now), JWKS, { ...options, currentDate: new Date(now) })
    expect(idp.state.reads).toBe(2)
  })

  it('reads the set again for an unknown kid, no sooner than the floor, and refuses a kid it never finds', async () => {
    let now = Date.UTC(2026, 0, 1)
    const a = await signingKey('a')
    const b = await signingKey('b')
    const idp = jwksEndpoint()
    idp.state.keys = [a.jwk]
    const docs = createProviderDocuments({ fetch: idp.fetch, now: () => now, jwksRefetchFloorMs: 60_000 })
    const options = () => ({ issuer: ISSUER, audience: 'client', currentDate: new Date(now) })
    await docs.verify(await token(a, 'a', now), JWKS, options())
    // The provider rotates to b; within the floor the cached set is all there is.
    idp.state.keys = [a.jwk, b.jwk]
    await expect(docs.verify(await token(b, 'b', now), JWKS, options())).rejects.toThrow(/no applicable key/)
    expect(idp.state.reads).toBe(1)
    now += 61_000
    expect(await docs.verify(await token(b, 'b', now), JWKS, options())).toMatchObject({ sub: 'ada' })
    expect(idp.state.reads).toBe(2)
    // Made-up kids cost one read per floor, however many arrive.
    now += 61_000
    const forged = await signingKey('forged')
    for (let i = 0; i < 5; i++)
      await expect(docs.verify(await token(forged, 'forged', now), JWKS, options())).rejects.toThrow(
        /no applicable key/,
      )
    expect(idp.state.reads).toBe(3)
  })

  it('uses the expired set while the provider is down, and fails clearly with none', async () => {
    let now = Date.UTC(2026, 0, 1)
    const a = await signingKey('a')
    const idp = jwksEndpoint()
    idp.state.keys = [a.jwk]
    idp.state.headers = { 'cache-control': 'max-age=10' }
    const docs = createProviderDocuments({ fetch: idp.fetch, now: () => now })
    const options = () => ({ issuer: ISSUER, audience: 'client', currentDate: new Date(now) })
    await docs.verify(await token(a, 'a', now), JWKS, options())
    idp.state.down = true
    now += 60_000
    expect(await docs.verify(await token(a, 'a', now), JWKS, options())).toMatchObject({ sub: 'ada' })
    const fresh = createProviderDocuments({ fetch: idp.fetch, now: () => now })
    const error = await fresh.verify(await token(a, 'a', now), JWKS, options()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ errorCode: 'OAUTH_EXCHANGE_FAILED' })
    expect((error as Error).message).toMatch(/JWKS: connect ECONNREFUSED/)
  })

  it('remembers a failed read: no read again within a back-off that doubles, forgotten on a success', async () => {
    let now = Date.UTC(2026, 0, 1)
    const state = { reads: 0, down: true }
    const doc = { issuer: ISSUER, token_endpoint: `${ISSUER}/token`, jwks_uri: JWKS }
    const fetch = async () => {
      state.reads++
      if (state.down) throw new Error('connect ECONNREFUSED')
      return new Response(JSON.stringify(doc), { headers: { 'cache-control': 'max-age=60' } })
    }
    const docs = createProviderDocuments({
      fetch,
      now: () => now,
      failureBackoffMs: 30_000,
      longestFailureBackoffMs: 100_000,
    })
    const refused = () =>
      expect(docs.discovery(ISSUER)).rejects.toThrow(/discovery document: connect ECONNREFUSED/)
    // Concurrent readers share the read; later ones are answered the same error without one.
    await Promise.all([refused(), refused(), refused()])
    expect(state.reads).toBe(1)
    const error = await docs.discovery(ISSUER).catch((e: unknown) => e)
    expect(error).toMatchObject({ errorCode: 'OAUTH_EXCHANGE_FAILED' })
    now += 29_999
    await refused()
    expect(state.reads).toBe(1)
    // 30 s, then 60 s, then 100 s (the longest), and again 100 s.
    const steps: [wait: number, reads: number][] = [
      [1, 2],
      [60_000, 3],
      [100_000, 4],
      [100_000, 5],
    ]
    for (const [wait, reads] of steps) {
      now += wait - 1
      await refused()
      expect(state.reads).toBe(reads - 1)
      now += 1
      await refused()
      expect(state.reads).toBe(reads)
    }
    // Back up: read after the back-off, then cached; a later failure starts over at 30 s and
    // serves the expired copy meanwhile.
    state.down = false
    now += 100_000
    expect(await docs.discovery(ISSUER)).toEqual(doc)
    expect(state.reads).toBe(6)
    state.down = true
    now += 60_000
    expect(await docs.discovery(ISSUER)).toEqual(doc)
    expect(state.reads).toBe(7)
    expect(await docs.discovery(ISSUER)).toEqual(doc)
    now += 29_999
    expect(await docs.discovery(ISSUER)).toEqual(doc)
    expect(state.reads).toBe(7)
    now += 1
    expect(await docs.discovery(ISSUER)).toEqual(doc)
    expect(state.reads).toBe(8)
  })

  it('verifies no token against a key set whose read failed, without reading it again, until the back-off ends', async () => {
    let now = Date.UTC(2026, 0, 1)
    const a = await signingKey('a')
    const idp = jwksEndpoint()
    idp.state.keys = [a.jwk]
    idp.state.down = true
    const docs = createProviderDocuments({ fetch: idp.fetch, now: () => now })
    const options = () => ({ issuer: ISSUER, audience: 'client', currentDate: new Date(now) })
    for (let i = 0; i < 5; i++)
      await expect(docs.verify(await token(a, 'a', now), JWKS, options())).rejects.toMatchObject({
        errorCode: 'OAUTH_EXCHANGE_FAILED',
        message: expect.stringMatching(/JWKS: connect ECONNREFUSED/),
      })
    expect(idp.state.reads).toBe(1)
    idp.state.down = false
    now += 30_000
    expect(await docs.verify(await token(a, 'a', now), JWKS, options())).toMatchObject({ sub: 'ada' })
    expect(idp.state.reads).toBe(2)
  })

  it('gives up on a provider that does not answer within the timeout', async () => {
    const hang = (_url: string, init: RequestInit) =>
      new Promise<Response>((_, reject) =>
        init.signal?.addEventListener('abort', () => reject(init.signal!.reason)),
      )
    const docs = createProviderDocuments({ fetch: hang, now: Date.now, timeoutMs: 50 })
    const started = Date.now()
    await expect(docs.discovery(ISSUER)).rejects.toMatchObject({ errorCode: 'OAUTH_EXCHANGE_FAILED' })
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it('refuses a discovery document that names another issuer or lacks endpoints', async () => {
    const serve = (doc: object) => async () => new Response(JSON.stringify(doc))
    const endpoints = { token_endpoint: `${ISSUER}/token`, jwks_uri: JWKS }
    const good = createProviderDocuments({ fetch: serve({ issuer: ISSUER, ...endpoints }), now: Date.now })
    expect(await good.discovery(ISSUER)).toMatchObject({ issuer: ISSUER, ...endpoints })
    const other = createProviderDocuments({
      fetch: serve({ issuer: 'https://evil.test', ...endpoints }),
      now: Date.now,
    })
    await expect(other.discovery(ISSUER)).rejects.toThrow(/names issuer "https:\/\/evil.test"/)
    const bare = createProviderDocuments({ fetch: serve({ issuer: ISSUER }), now: Date.now })
    await expect(bare.discovery(ISSUER)).rejects.toThrow(/lacks token_endpoint or jwks_uri/)
  })
})

describe('appleClientSecret', () => {
  it('signs the client-secret JWT Apple expects and renews it before it expires', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
    let now = Date.UTC(2026, 0, 1)
    const secret = appleClientSecret(
      { teamId: 'TEAM123456', keyId: 'KEY1234567', privateKey: await exportPKCS8(privateKey) },
      'com.example.app',
      () => now,
    )
    const first = await secret()
    expect(decodeProtectedHeader(first)).toEqual({ alg: 'ES256', kid: 'KEY1234567' })
    const iat = Math.floor(now / 1000)
    expect(decodeJwt(first)).toEqual({
      iss: 'TEAM123456',
      sub: 'com.example.app',
      aud: APPLE_AUDIENCE,
      iat,
      exp: iat + 3600,
    })
    await jwtVerify(first, publicKey, { currentDate: new Date(now) })
    now += 30 * 60_000
    expect(await secret()).toBe(first)
    now += 26 * 60_000
    const renewed = await secret()
    expect(renewed).not.toBe(first)
    expect(decodeJwt(renewed).iat).toBe(Math.floor(now / 1000))
  })
})

describe('createOAuthProviders', () => {
  const base = { fetch: globalThis.fetch, devFetch: globalThis.fetch, now: Date.now }
  const google = { clientId: 'id', clientSecret: 'secret', redirectUris: ['https://app.test/cb'] }

  it('refuses a provider it cannot use, naming the option', () => {
    const refusal = (providers: object) => {
      try {
        createOAuthProviders({ ...base, oauth: { providers } })
      } catch (error) {
        expect(error).toBeInstanceOf(OAuthConfigError)
        return (error as Error).message
      }
      throw new Error('expected a refusal')
    }
    expect(refusal({ google: { ...google, clientSecret: undefined } })).toBe(
      'oauth.providers.google.clientSecret is required',
    )
    expect(refusal({ apple: { clientId: 'id', redirectUris: ['https://app.test/cb'] } })).toBe(
      'oauth.providers.apple.appleKey (or clientSecret) is required',
    )
    expect(refusal({ google: { ...google, redirectUris: [] } })).toBe(
      'oauth.providers.google.redirectUris needs at least one URI',
    )
    expect(refusal({ discord: google })).toBe(
      'oauth.providers.discord.issuer is required (discord has no well-known issuer)',
    )
    expect(refusal({ myspace: google })).toMatch(/^oauth.providers.myspace: unknown sign-in method/)
    expect(refusal({ google: { ...google, appleKey: { teamId: 't', keyId: 'k', privateKey: 'p' } } })).toBe(
      'oauth.providers.google.appleKey is for apple only',
    )
  })

  it('serves the dev identity provider only when no provider is configured, unless told', async () => {
    expect(createOAuthProviders(base).devIdentityProvider).toBe(true)
    const configured = createOAuthProviders({ ...base, oauth: { providers: { google } } })
    expect(configured.devIdentityProvider).toBe(false)
    await expect(configured.resolve('apple', undefined)).rejects.toMatchObject({
      errorCode: 'OAUTH_PROVIDER_NOT_FOUND',
    })
    const both = createOAuthProviders({
      ...base,
      oauth: { providers: { google }, devIdentityProvider: true },
    })
    expect(await both.resolve('apple', undefined)).toMatchObject({ dev: true })
    expect(createOAuthProviders({ ...base, oauth: { devIdentityProvider: false } }).devIdentityProvider).toBe(
      false,
    )
  })
})
