// Sign-in attacks by a caller holding a key of their own: a session confined by a session profile
// reaching the operator's auth-proxy settings, session lifetimes chosen by the caller (through the
// auth proxy and the activity API alike), and an OAuth code of another app's client id.
import { PROXY_CONFIG_HEADER, SETTINGS_ROUTES } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { MAX_SESSION_SECONDS } from '../domain/sessions.ts'
import {
  createHarness,
  type Harness,
  type Json,
  resultOf,
  type TestKey,
  testKey,
} from '../testing/harness.ts'
import { oidcNonce } from './oauth/oidcNonce.ts'
import { s256Challenge } from './oauth/pkce.ts'

const APP = 'http://app.test'

/** A stamped `/dev/settings/update` of the parent organization. */
async function updateSettings(h: Harness, changes: Json, as: TestKey) {
  h.clock.advance(1)
  const body = JSON.stringify({
    organizationId: h.organizationId,
    timestampMs: String(h.clock.now()),
    settings: changes,
  })
  const [header, value] = as.stamp(body)
  return h.post(SETTINGS_ROUTES.update, body, { [header]: value })
}

/** A browser page of the app calling the auth proxy. */
async function proxy(h: Harness, path: string, body: Json) {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: APP,
    },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Json }
}

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
    const reply = await updateSettings(h, { sessionExpirationSeconds: String(MAX_SESSION_SECONDS) }, scoped)
    expect([reply.status, reply.body.details?.errorCode]).toEqual([403, 'SESSION_SCOPE_DENIED'])
    expect((await h.service.store.get('proxyConfigs', before.id))!.settings).toEqual(before.settings)
    // The root user's own (unconfined) key still may.
    expect((await updateSettings(h, { sessionExpirationSeconds: '1200' }, h.root)).status).toBe(200)
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

  it('the auth proxy refuses them before any proof is spent, naming its own field', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    // The proxy routes by the token's claims before the activity verifies it; the lifetime is
    // judged before either looks at the proof.
    const part = (value: Json) => Buffer.from(JSON.stringify(value)).toString('base64url')
    const unverifiedToken = `${part({ alg: 'ES256' })}.${part({ verification_type: 'OTP_TYPE_EMAIL', contact: 'a@example.com' })}.c2ln`
    for (const expirationSeconds of [String(MAX_SESSION_SECONDS + 1), '-60', 'forever']) {
      const reply = await proxy(h, 'otp_login', {
        verificationToken: unverifiedToken,
        publicKey: testKey().publicKey,
        organizationId: sub.organizationId,
        expirationSeconds,
      })
      expect([reply.status, reply.body.details?.field], expirationSeconds).toEqual([400, 'expirationSeconds'])
    }
  })
})

/** A code for `clientId` from the identity provider at `issuer`, `email` consenting (the dev IdP's form). */
async function codeFrom(
  h: Harness,
  issuer: string,
  clientId: string,
  nonce: string,
  verifier: string,
  email: string,
) {
  const url = new URL(`${issuer}/authorize`)
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: `${APP}/cb`,
    state: 'st',
    nonce,
    code_challenge: s256Challenge(verifier),
    code_challenge_method: 'S256',
  }
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  const html = await (await h.service.app.request(`${url.pathname}${url.search}`)).text()
  const fields = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
  )
  const post = await h.service.app.request(url.pathname, {
    method: 'POST',
    body: new URLSearchParams({ ...fields, email, name: 'Hal', action: 'continue' }),
  })
  return new URL(post.headers.get('location')!).searchParams.get('code')!
}

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
        await updateSettings(
          h,
          {
            oauth: {
              clientIds: { discord: 'this-app' },
              providers: {
                discord: {
                  issuer,
                  authorizationEndpoint: `${issuer}/authorize`,
                  tokenEndpoint: `${issuer}/token`,
                  jwksUri: `${issuer}/jwks`,
                },
              },
            },
          },
          h.root,
        )
      ).status,
    ).toBe(200)
    const verifier = 'v'.repeat(50)
    const authenticate = async (clientId: string, publicKey: string) =>
      proxy(h, 'oauth2_authenticate', {
        provider: 'OAUTH2_PROVIDER_DISCORD',
        authCode: await codeFrom(h, issuer, clientId, oidcNonce(publicKey), verifier, 'hal@example.com'),
        redirectUri: `${APP}/cb`,
        codeVerifier: verifier,
        nonce: oidcNonce(publicKey),
        clientId,
      })
    // Hal's account, signed up through this app.
    const hal = testKey()
    const own = await authenticate('this-app', hal.publicKey)
    expect(own.status).toBe(200)
    const signup = await proxy(h, 'signup', {
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
    // Settings still naming the new configuration's placeholder bind no client: every code is
    // refused, naming the setting to fill in, rather than any client id accepted.
    const placeholder = await updateSettings(
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
        proxy(h, 'oauth_login', { oidcToken: own.body.oidcToken, publicKey: hal.publicKey }),
      ),
    )
    expect(logins.filter((reply) => reply.status === 200)).toHaveLength(1)
    for (const reply of logins.filter((r) => r.status !== 200))
      expect([reply.status, reply.body.details?.errorCode]).toEqual([401, 'OIDC_TOKEN_REPLAYED'])
  })
})
