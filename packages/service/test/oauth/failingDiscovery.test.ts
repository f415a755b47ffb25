// An operator-configured provider whose OIDC discovery document cannot be read: anonymous callers
// of the auth proxy (`wallet_kit_config` on every page load, `oauth2_authenticate`) must not make
// the service read it again on every call. No network: the service's `fetch` is a counting stub.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { afterEach, expect, it } from 'vitest'
import { createHarness, type Harness, type Json } from '../../src/testing/harness.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.service.close()
  h = undefined
})

const METHODS = ['google', 'x', 'discord'] as const
const issuerOf = (method: string) => `https://idp-${method}.example.com`
const REDIRECT = 'https://app.example.com/cb'

/** Providers that answer their discovery document with a quick 503 until `up`. */
function providers() {
  const state = { up: false, reads: [] as string[] }
  const fetch = async (input: RequestInfo | URL) => {
    const url = String(input)
    state.reads.push(url)
    const issuer = METHODS.map(issuerOf).find((i) => url === `${i}/.well-known/openid-configuration`)
    if (!state.up || !issuer) return new Response('down', { status: 503 })
    return Response.json({
      issuer,
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
    })
  }
  return { state, fetch }
}

async function serviceWith(fetch: (input: RequestInfo | URL) => Promise<Response>) {
  const provider = (method: string) => ({
    clientId: `app-${method}`,
    clientSecret: 'secret',
    redirectUris: [REDIRECT],
    issuer: issuerOf(method),
  })
  return createHarness({
    oauth: {
      devIdentityProvider: false,
      providers: Object.fromEntries(METHODS.map((m) => [m, provider(m)])),
    },
    fetch,
  })
}

/** An anonymous caller of the auth proxy. */
const proxy = (service: Harness) => async (path: string, body: object) => {
  const response = await service.service.app.request(
    `/v1/${path}`,
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [PROXY_CONFIG_HEADER]: service.service.dev.authProxyConfigId!,
      },
      body: JSON.stringify(body),
    },
    { incoming: { socket: { remoteAddress: '203.0.113.7' } } },
  )
  return { status: response.status, body: (await response.json()) as Record<string, Json> }
}

it('reads a failing discovery document once per back-off, not on every anonymous call', async () => {
  const idp = providers()
  h = await serviceWith(idp.fetch)
  const call = proxy(h)
  // The call works; the methods whose provider cannot be read are left out.
  const first = await call('wallet_kit_config', {})
  expect(first.status).toBe(200)
  expect(first.body.oauthAuthorizationEndpoints).toEqual({})
  expect(idp.state.reads).toHaveLength(METHODS.length)
  for (let i = 0; i < 19; i++) expect((await call('wallet_kit_config', {})).status).toBe(200)
  expect(idp.state.reads).toHaveLength(METHODS.length)

  // A sign-in meanwhile is refused at once, with the error the failed read gave.
  const signIn = await call('oauth2_authenticate', {
    provider: 'OAUTH2_PROVIDER_GOOGLE',
    authCode: 'code',
    redirectUri: REDIRECT,
    codeVerifier: `pkce-verifier-${'x'.repeat(40)}`,
    nonce: 'a'.repeat(64),
    clientId: 'app-google',
  })
  expect(signIn.status).toBeGreaterThanOrEqual(400)
  expect(signIn.status).toBeLessThan(500)
  expect(JSON.stringify(signIn.body)).toMatch(/OAUTH_EXCHANGE_FAILED/)
  expect(signIn.body.message).toMatch(/discovery document: HTTP 503/)
  expect(idp.state.reads).toHaveLength(METHODS.length)

  // The providers recover: not asked before the back-off ends, then read again and listed.
  idp.state.up = true
  h.clock.advance(29_000)
  expect((await call('wallet_kit_config', {})).body.oauthAuthorizationEndpoints).toEqual({})
  expect(idp.state.reads).toHaveLength(METHODS.length)
  h.clock.advance(1_000)
  const recovered = await call('wallet_kit_config', {})
  expect(recovered.body.oauthAuthorizationEndpoints).toEqual(
    Object.fromEntries(METHODS.map((m) => [m, `${issuerOf(m)}/auth`])),
  )
  expect(idp.state.reads).toHaveLength(2 * METHODS.length)
  // Read successfully, the documents are cached as before.
  await call('wallet_kit_config', {})
  expect(idp.state.reads).toHaveLength(2 * METHODS.length)
})
