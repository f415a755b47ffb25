import { decodeJwtClaims, PROXY_CONFIG_HEADER, type SessionClaims } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import { oidcNonce } from '../../src/signin/oauth/oidcNonce.ts'
import { s256Challenge } from '../../src/signin/oauth/pkce.ts'
import { createHarness, fakeClock, type Harness, type Json } from '../../src/testing/harness.ts'
import { type OidcProvider, startOidcProvider } from './startOidcProvider.ts'

const APP = 'http://app.test'
const REDIRECT = 'http://app.test/oauth/callback'
const CLIENT = {
  client_id: 'latchkey-app',
  client_secret: 'a-confidential-secret-of-the-app',
  redirect_uris: [REDIRECT],
}
const verifier = `pkce-verifier-${'x'.repeat(40)}`

let idp: OidcProvider
/** Another provider: its keys are not the first one's. */
let stranger: OidcProvider

beforeAll(async () => {
  idp = await startOidcProvider([CLIENT, { ...CLIENT, client_id: 'another-app' }])
  stranger = await startOidcProvider([CLIENT], { keyId: 'stranger-key' })
})
afterAll(async () => {
  await idp?.close()
  await stranger?.close()
})

const googleAt = (provider: OidcProvider, more: object = {}): CreateServiceOptions['oauth'] => ({
  providers: {
    google: {
      clientId: CLIENT.client_id,
      clientSecret: CLIENT.client_secret,
      redirectUris: [REDIRECT],
      issuer: provider.issuer,
      ...more,
    },
  },
})

async function serviceWith(oauth: CreateServiceOptions['oauth']) {
  return createHarness({ clock: fakeClock(Date.now()), oauth })
}

/** A browser page of the app calling the auth proxy. */
function proxy(h: Harness) {
  return async (path: string, body: object) => {
    const response = await h.service.app.request(`/v1/${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Origin: APP,
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as Json & Record<string, Json> }
  }
}

function clientKey() {
  const publicKey = bytesToHex(p256.getPublicKey(p256.utils.randomSecretKey(), true))
  return { publicKey, nonce: oidcNonce(publicKey) }
}

const exchange = (nonce: string, authCode: string, more: object = {}) => ({
  provider: 'OAUTH2_PROVIDER_GOOGLE',
  authCode,
  redirectUri: REDIRECT,
  codeVerifier: verifier,
  nonce,
  clientId: CLIENT.client_id,
  ...more,
})

const codeFor = (provider: OidcProvider, nonce: string, account = 'ada', clientId = CLIENT.client_id) =>
  provider.authorize(
    { clientId, redirectUri: REDIRECT, nonce, codeChallenge: s256Challenge(verifier) },
    account,
  )

const errorOf = (reply: { status: number; body: Record<string, Json> }) => ({
  status: reply.status,
  code: reply.body.code,
  errorCode: (reply.body.details as Record<string, Json> | undefined)?.errorCode ?? reply.body.errorCode,
})

describe('OAuth sign-in with a real OpenID Connect provider (confidential client)', () => {
  it('signs a user up and in through the auth proxy, with the dev identity provider gone', async () => {
    const h = await serviceWith(googleAt(idp))
    const call = proxy(h)
    const config = await call('wallet_kit_config', {})
    expect(config.body.oauthClientIds).toMatchObject({ google: CLIENT.client_id })
    expect(config.body.oauthAuthorizationEndpoints).toEqual({ google: `${idp.issuer}/auth` })
    expect((await h.service.app.request('/dev/oidc/google/.well-known/openid-configuration')).status).toBe(
      404,
    )

    const key = clientKey()
    const before = idp.tokenRequests
    const auth = await call(
      'oauth2_authenticate',
      exchange(key.nonce, await codeFor(idp, key.nonce, 'grace')),
    )
    expect(auth.status).toBe(200)
    expect(idp.tokenRequests).toBe(before + 1)
    const oidcToken = auth.body.oidcToken as string
    expect(decodeJwtClaims(oidcToken)).toMatchObject({
      aud: CLIENT.client_id,
      sub: 'grace',
      idp_iss: idp.issuer,
      email: 'grace@example.com',
      nonce: key.nonce,
      provider: 'OAUTH2_PROVIDER_GOOGLE',
    })
    const signup = await call('signup', {
      userName: 'Grace',
      userEmail: 'grace@example.com',
      oauthProviders: [{ providerName: 'google', oidcToken }],
    })
    expect(signup.status).toBe(200)
    const login = await call('oauth_login', {
      oidcToken,
      publicKey: key.publicKey,
      invalidateExisting: false,
    })
    expect(login.status).toBe(200)
    expect(decodeJwtClaims<SessionClaims>(login.body.session as string)).toMatchObject({
      user_id: signup.body.userId,
      organization_id: signup.body.organizationId,
      public_key: key.publicKey,
    })
    // The service's token is spent: the same login again is a replay.
    expect(errorOf(await call('oauth_login', { oidcToken, publicKey: key.publicKey }))).toMatchObject({
      status: 401,
    })
    // A method the operator did not configure has no provider now that the dev one is off.
    expect(
      errorOf(
        await call(
          'oauth2_authenticate',
          exchange(key.nonce, 'any-code', { provider: 'OAUTH2_PROVIDER_APPLE' }),
        ),
      ),
    ).toMatchObject({ status: 404 })
    await h.service.close()
  })

  it('authenticates with client_secret_post too, and a wrong secret is refused by the provider', async () => {
    const h = await serviceWith(googleAt(idp, { tokenEndpointAuthMethod: 'client_secret_post' }))
    const key = clientKey()
    expect(
      (await proxy(h)('oauth2_authenticate', exchange(key.nonce, await codeFor(idp, key.nonce)))).status,
    ).toBe(200)
    const wrong = await serviceWith(googleAt(idp, { clientSecret: 'not-the-secret' }))
    const refused = await proxy(wrong)(
      'oauth2_authenticate',
      exchange(key.nonce, await codeFor(idp, key.nonce)),
    )
    expect(refused.status).toBe(401)
    expect(JSON.stringify(refused.body)).not.toContain('not-the-secret')
    await h.service.close()
    await wrong.service.close()
  })

  it('refuses a replayed code, a token for another nonce, another audience, issuer or key, and an expired token', async () => {
    const h = await serviceWith(googleAt(idp))
    const call = proxy(h)
    const key = clientKey()

    // A code is spent by its first exchange.
    const code = await codeFor(idp, key.nonce)
    expect((await call('oauth2_authenticate', exchange(key.nonce, code))).status).toBe(200)
    expect(errorOf(await call('oauth2_authenticate', exchange(key.nonce, code)))).toMatchObject({
      status: 401,
    })

    // An ID token minted for someone else's nonce (another key) does not sign this key in.
    const theirs = clientKey()
    const replayed = await call('oauth2_authenticate', exchange(key.nonce, await codeFor(idp, theirs.nonce)))
    expect(replayed.status).toBe(401)
    expect(replayed.body.message).toMatch(/nonce/)

    // A code of another client (audience) is refused before the provider is called.
    const before = idp.tokenRequests
    const otherClient = await call(
      'oauth2_authenticate',
      exchange(key.nonce, await codeFor(idp, key.nonce, 'ada', 'another-app'), { clientId: 'another-app' }),
    )
    expect(otherClient.status).toBe(401)
    expect(otherClient.body.message).toMatch(/client/)
    expect(idp.tokenRequests).toBe(before)
    // A redirect URI the operator did not register, likewise.
    expect(
      (await call('oauth2_authenticate', exchange(key.nonce, 'code', { redirectUri: 'http://evil.test/cb' })))
        .status,
    ).toBe(401)

    // An expired ID token: the service's clock past its exp.
    const late = await codeFor(idp, key.nonce)
    h.clock.advance(2 * 60 * 60 * 1000)
    const expired = await call('oauth2_authenticate', exchange(key.nonce, late))
    expect(expired.status).toBe(401)
    expect(expired.body.message).toMatch(/exp/)
    await h.service.close()

    // Another issuer: the endpoints are the provider's, the expected issuer is not.
    const endpoints = {
      authorizationEndpoint: `${idp.issuer}/auth`,
      tokenEndpoint: `${idp.issuer}/token`,
      jwksUri: `${idp.issuer}/jwks`,
      tokenEndpointAuthMethod: 'client_secret_basic',
    }
    const wrongIssuer = await serviceWith(
      googleAt(idp, { ...endpoints, issuer: 'https://accounts.google.com' }),
    )
    const issuerRefusal = await proxy(wrongIssuer)(
      'oauth2_authenticate',
      exchange(key.nonce, await codeFor(idp, key.nonce)),
    )
    expect(issuerRefusal.status).toBe(401)
    expect(issuerRefusal.body.message).toMatch(/iss/)
    await wrongIssuer.service.close()

    // A key the provider's JWKS does not hold (the stranger's set stands in for a rotated one).
    const unknownKid = await serviceWith(googleAt(idp, { ...endpoints, jwksUri: `${stranger.issuer}/jwks` }))
    const kidRefusal = await proxy(unknownKid)(
      'oauth2_authenticate',
      exchange(key.nonce, await codeFor(idp, key.nonce)),
    )
    expect(kidRefusal.status).toBe(401)
    expect(kidRefusal.body.message).toMatch(/key/i)
    await unknownKid.service.close()
  })

  it('refuses a provider whose discovery names another issuer', async () => {
    // The stranger's discovery document is read for the first provider's name.
    const h = await serviceWith({
      providers: {
        google: {
          clientId: CLIENT.client_id,
          clientSecret: CLIENT.client_secret,
          redirectUris: [REDIRECT],
          issuer: `${stranger.issuer}/`,
        },
      },
    })
    const key = clientKey()
    const reply = await proxy(h)(
      'oauth2_authenticate',
      exchange(key.nonce, await codeFor(stranger, key.nonce)),
    )
    expect(reply.status).toBe(401)
    expect(reply.body.message).toMatch(/names issuer/)
    await h.service.close()
  })
})
