// oauth2_authenticate kept authCode and codeVerifier (with the nonce, client id and redirect URI)
// in its intent, which get_activity shows to every reader of the parent organization (ids from
// latchkey_list_webhook_deliveries). Its answer's OIDC token is shown once on the ground that the
// code was spent at the provider, but an exchange that failed before the provider took the code
// (the token endpoint unreachable, discovery down) left a live code and its PKCE verifier in the
// FAILED record. A parent organization's non-root user exchanged them at the public auth proxy,
// got the first-time user's OIDC token (its e-mail proven), signed up first, and the person's
// later logins landed in the taker's account. Now both are bearer parameters: never shown.
import { decodeJwtClaims, type SessionClaims } from '@latchkey/protocol'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { s256Challenge } from '../../src/signin/oauth/pkce.ts'
import { createHarness, fakeClock, type Harness } from '../../src/testing/harness.ts'
import { type OidcProvider, startOidcProvider } from '../oauth/startOidcProvider.ts'
import { CLIENT, clientKey, googleAt, proxyOf, REDIRECT } from './googleSignIn.ts'
import { announceActivities, announcedIds, supportUser } from './recordReaders.ts'

const verifier = `pkce-verifier-${'y'.repeat(40)}`

let idp: OidcProvider
beforeAll(async () => {
  idp = await startOidcProvider([CLIENT])
})
afterAll(async () => {
  await idp?.close()
})
const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

/** The service's outbound fetch: the provider's token endpoint is unreachable while `down`. */
const network = { down: false, tokenCallsRefused: 0 }
const flakyFetch = async (input: RequestInfo | URL, init?: RequestInit) => {
  const url = String(input instanceof Request ? input.url : input)
  if (network.down && url.startsWith(idp.issuer) && new URL(url).pathname.startsWith('/token')) {
    network.tokenCallsRefused++
    throw new TypeError('fetch failed: connect ECONNRESET')
  }
  return fetch(input, init)
}

async function service(): Promise<Harness> {
  const h = await createHarness({
    clock: fakeClock(Date.now()),
    fetch: flakyFetch as typeof fetch,
    oauth: googleAt(idp),
  })
  harnesses.push(h)
  return h
}

describe('a failed oauth2_authenticate record', () => {
  it("shows a parent organization's non-root user no live authCode + codeVerifier to replay and sign up first as the person", async () => {
    const h = await service()
    await announceActivities(h)
    const staff = await supportUser(h)
    const call = proxyOf(h)
    // Control: a sign-in works while the provider is reachable (discovery cached meanwhile).
    const warm = clientKey()
    const warmCode = await idp.authorize(
      {
        clientId: CLIENT.client_id,
        redirectUri: REDIRECT,
        nonce: warm.nonce,
        codeChallenge: s256Challenge(verifier),
      },
      'warmup',
    )
    const ok = await call('oauth2_authenticate', {
      provider: 'OAUTH2_PROVIDER_GOOGLE',
      authCode: warmCode,
      redirectUri: REDIRECT,
      codeVerifier: verifier,
      nonce: warm.nonce,
      clientId: CLIENT.client_id,
    })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)

    // A first-time user's sign-in while the token endpoint is briefly unreachable: refused.
    const victim = clientKey()
    const code = await idp.authorize(
      {
        clientId: CLIENT.client_id,
        redirectUri: REDIRECT,
        nonce: victim.nonce,
        codeChallenge: s256Challenge(verifier),
      },
      'victim',
    )
    network.down = true
    const failed = await call('oauth2_authenticate', {
      provider: 'OAUTH2_PROVIDER_GOOGLE',
      authCode: code,
      redirectUri: REDIRECT,
      codeVerifier: verifier,
      nonce: victim.nonce,
      clientId: CLIENT.client_id,
    })
    network.down = false
    expect(failed.status).toBeGreaterThanOrEqual(400)
    expect(network.tokenCallsRefused).toBe(1)

    // The support user reads the records announced to the organization.
    const ids = await announcedIds(h, staff, () => true)
    let leaked:
      | { authCode: string; codeVerifier: string; nonce: string; clientId: string; redirectUri: string }
      | undefined
    for (const activityId of new Set(ids)) {
      const record = await h.query('get_activity', { activityId }, staff)
      if (record.status !== 200) continue
      const activity = record.body.activity as { intent?: Record<string, Record<string, string>> }
      const intent = Object.values(activity.intent ?? {})[0]
      if (intent?.authCode === code) leaked = intent as never
    }

    let hijack: Record<string, unknown> | undefined
    if (leaked) {
      // Replayed at the public proxy: the provider still takes the code, and the service answers
      // the person's OIDC token (bound to the person's key, which sign-up does not ask for).
      const replay = await call('oauth2_authenticate', { provider: 'OAUTH2_PROVIDER_GOOGLE', ...leaked })
      const stolen = replay.body.oidcToken as string | undefined
      let signupStatus: number | undefined
      let victimLoggedIntoAttackerAccount = false
      if (replay.status === 200 && stolen) {
        const attacker = clientKey()
        const signup = await call('signup', {
          userName: 'victim',
          userEmail: 'victim@example.com',
          apiKeys: [
            {
              apiKeyName: 'attacker',
              publicKey: attacker.publicKey,
              curveType: 'API_KEY_CURVE_P256',
              expirationSeconds: '900',
            },
          ],
          authenticators: [],
          oauthProviders: [{ providerName: 'google', oidcToken: stolen }],
        })
        signupStatus = signup.status
        // The person tries again (a fresh code and token) and logs in: into the taker's account.
        h.clock.advance(1000)
        const again = await idp.authorize(
          {
            clientId: CLIENT.client_id,
            redirectUri: REDIRECT,
            nonce: victim.nonce,
            codeChallenge: s256Challenge(verifier),
          },
          'victim',
        )
        const auth = await call('oauth2_authenticate', {
          provider: 'OAUTH2_PROVIDER_GOOGLE',
          authCode: again,
          redirectUri: REDIRECT,
          codeVerifier: verifier,
          nonce: victim.nonce,
          clientId: CLIENT.client_id,
        })
        expect(auth.status).toBe(200)
        const login = await call('oauth_login', {
          oidcToken: auth.body.oidcToken,
          publicKey: victim.publicKey,
        })
        if (login.status === 200)
          victimLoggedIntoAttackerAccount =
            decodeJwtClaims<SessionClaims>(login.body.session as string).organization_id ===
            signup.body.organizationId
      }
      hijack = { replayStatus: replay.status, signupStatus, victimLoggedIntoAttackerAccount }
    }
    expect({ leakedCode: leaked !== undefined, hijack }).toEqual({ leakedCode: false, hijack: undefined })
  })
})
