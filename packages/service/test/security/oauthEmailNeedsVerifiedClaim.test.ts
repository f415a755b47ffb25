// An OIDC token proves its e-mail only when the provider says it verified it (`email_verified`
// true, or the string "true" Apple sends). A token that says nothing (Facebook's Limited Login
// tokens, many custom issuers: an address the provider's user typed and never confirmed) counted as
// proof at the proxy's sign-up and in create_sub_organization's link, so an attacker whose identity
// named the victim's address signed up with it, and the victim's account lookup and e-mail code
// login landed in the attacker's account. Now such a token signs up and logs in by its identity
// (issuer and subject) and the address is kept unverified: it routes no login and answers no lookup.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { s256Challenge } from '../../src/signin/oauth/pkce.ts'
import { createHarness, fakeClock, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { type OidcProvider, startOidcProvider } from '../oauth/startOidcProvider.ts'
import { CLIENT, clientKey, proxyOf, REDIRECT } from './googleSignIn.ts'

const verifier = `pkce-verifier-${'x'.repeat(40)}`
const VICTIM = 'victim@example.com'

/** Each account's claims at the provider besides `sub`, as a test sets them. */
const claimsOf = new Map<string, Record<string, unknown>>()
let idp: OidcProvider
beforeAll(async () => {
  idp = await startOidcProvider([CLIENT], {
    accountClaims: (account) =>
      claimsOf.get(account) ?? { email: `${account}@example.com`, email_verified: true },
  })
})
afterAll(async () => {
  await idp?.close()
})
const harnesses: Harness[] = []
afterEach(async () => {
  claimsOf.clear()
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

async function service(): Promise<Harness> {
  const h = await createHarness({
    clock: fakeClock(Date.now()),
    oauth: {
      providers: {
        facebook: {
          clientId: CLIENT.client_id,
          clientSecret: CLIENT.client_secret,
          redirectUris: [REDIRECT],
          issuer: idp.issuer,
        },
      },
    },
  })
  harnesses.push(h)
  return h
}

/** A Facebook sign-in at the proxy as `account`, whose ID token carries `claims`; the service's token. */
async function authenticate(
  h: Harness,
  key: { nonce: string },
  account: string,
  claims: Record<string, unknown>,
): Promise<string> {
  claimsOf.set(account, claims)
  const code = await idp.authorize(
    {
      clientId: CLIENT.client_id,
      redirectUri: REDIRECT,
      nonce: key.nonce,
      codeChallenge: s256Challenge(verifier),
    },
    account,
  )
  const auth = await proxyOf(h)('oauth2_authenticate', {
    provider: 'OAUTH2_PROVIDER_FACEBOOK',
    authCode: code,
    redirectUri: REDIRECT,
    codeVerifier: verifier,
    nonce: key.nonce,
    clientId: CLIENT.client_id,
  })
  expect(auth.status, JSON.stringify(auth.body)).toBe(200)
  return auth.body.oidcToken as string
}

/** The published OAuth sign-up: the token's e-mail as `userEmail`, the browser's session key. */
async function signUp(h: Harness, key: { publicKey: string }, oidcToken: string, userEmail: string) {
  const signup = await proxyOf(h)('signup', {
    userName: userEmail,
    userEmail,
    apiKeys: [
      {
        apiKeyName: 'session',
        publicKey: key.publicKey,
        curveType: 'API_KEY_CURVE_P256',
        expirationSeconds: '900',
      },
    ],
    authenticators: [],
    oauthProviders: [{ providerName: 'facebook', oidcToken }],
  })
  expect(signup.status, JSON.stringify(signup.body)).toBe(200)
  return { organizationId: signup.body.organizationId as string, userId: signup.body.userId as string }
}

/** The account the proxy's lookup by e-mail finds (what the kit's e-mail sign-in asks first). */
async function lookup(h: Harness, email: string): Promise<string | null> {
  const found = await proxyOf(h)('account', { filterType: 'EMAIL', filterValue: email })
  expect(found.status).toBe(200)
  return found.body.organizationId as string | null
}

/** The address as the user row holds it. */
async function storedEmail(h: Harness, userId: string) {
  const row = await h.service.store.get('users', userId)
  return { userEmail: row?.userEmail, unverified: row?.userEmailUnverified === true }
}

describe('an OIDC token proves its e-mail only when the provider says it verified it', () => {
  it("a token without email_verified naming the victim's address signs up by its identity; the victim's lookup and e-mail code login do not land there", async () => {
    const h = await service()
    const call = proxyOf(h)
    const attacker = clientKey()
    // The attacker's identity at the provider names the victim's address, with no email_verified.
    const token = await authenticate(h, attacker, 'mallory', { email: VICTIM })
    const account = await signUp(h, attacker, token, VICTIM)
    expect(await storedEmail(h, account.userId)).toEqual({ userEmail: VICTIM, unverified: true })

    // The victim signs in by e-mail as the kit does: the lookup, then a code and its login.
    expect(await lookup(h, VICTIM)).toBe(null)
    const init = await call('otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: VICTIM })
    expect(init.status).toBe(200)
    const outbox = await (
      await h.service.app.request(`/dev/outbox.json?contact=${encodeURIComponent(VICTIM)}`)
    ).json()
    const otpCode = (outbox.messages as { otpId: string; code: string }[]).find(
      (message) => message.otpId === init.body.otpId,
    )!.code
    const verify = await call('otp_verify', { otpId: init.body.otpId, otpCode })
    expect(verify.status).toBe(200)
    const victimKey = testKey()
    const login = await call('otp_login', {
      verificationToken: verify.body.verificationToken,
      publicKey: victimKey.publicKey,
    })
    // No account holds the address: the kit signs the victim up (an account of their own).
    expect(login.status).toBe(404)
    expect(
      (await h.query('whoami', {}, { as: victimKey, organizationId: account.organizationId })).status,
    ).not.toBe(200)

    // The attacker's identity still signs in, to its own account.
    const session = await call('oauth_login', {
      oidcToken: token,
      publicKey: attacker.publicKey,
      organizationId: account.organizationId,
    })
    expect(session.status, JSON.stringify(session.body)).toBe(200)
    expect(typeof session.body.session).toBe('string')
    expect(
      (await call('account', { filterType: 'OIDC_TOKEN', filterValue: token })).body.organizationId,
    ).toBe(account.organizationId)
  }, 60_000)

  it.each([
    ['boolean-true', true, true],
    ['string-true', 'true', true],
    ['boolean-false', false, false],
    ['string-false', 'false', false],
    ['other-string', 'yes', false],
  ] as const)(
    'email_verified %s (%j): the address is proven: %s',
    async (account, said, proves) => {
      const h = await service()
      const email = `${account}@example.com`
      const key = clientKey()
      const token = await authenticate(h, key, account, { email, email_verified: said })
      const signed = await signUp(h, key, token, email)
      expect(await storedEmail(h, signed.userId)).toEqual({ userEmail: email, unverified: !proves })
      expect(await lookup(h, email)).toBe(proves ? signed.organizationId : null)
    },
    60_000,
  )

  it('the proxy still takes no e-mail that neither a verification token nor an OAuth token of the request carries', async () => {
    const h = await service()
    const key = clientKey()
    const token = await authenticate(h, key, 'mallory', {
      email: 'mallory@example.com',
      email_verified: true,
    })
    const signup = await proxyOf(h)('signup', {
      userName: 'victim',
      userEmail: VICTIM,
      apiKeys: [],
      authenticators: [],
      oauthProviders: [{ providerName: 'facebook', oidcToken: token }],
    })
    expect({ status: signup.status, ...signup.body.details }).toEqual({
      status: 401,
      errorCode: 'VERIFICATION_TOKEN_INVALID',
      field: 'userEmail',
    })
  }, 60_000)

  it('create_oauth_providers and create_users in the account verify the address only with a token that proves it', async () => {
    const h = await service()
    const attacker = clientKey()
    const first = await authenticate(h, attacker, 'mallory', { email: VICTIM })
    const account = await signUp(h, attacker, first, VICTIM)
    const as = { as: attacker, organizationId: account.organizationId }

    // A second identity, naming the victim's address without email_verified, linked to the user.
    const second = await authenticate(h, clientKey(), 'mallory-2', { email: VICTIM })
    resultOf(
      'create_oauth_providers',
      await h.submit(
        'create_oauth_providers',
        { userId: account.userId, oauthProviders: [{ providerName: 'facebook', oidcToken: second }] },
        as,
      ),
    )
    expect(await storedEmail(h, account.userId)).toEqual({ userEmail: VICTIM, unverified: true })
    expect(await lookup(h, VICTIM)).toBe(null)

    // A new user of the account with another stranger's address and a token naming it, unsaid.
    const other = 'other@example.com'
    const third = await authenticate(h, clientKey(), 'mallory-3', { email: other })
    const created = resultOf(
      'create_users',
      await h.submit(
        'create_users',
        {
          users: [
            {
              userName: 'other',
              userEmail: other,
              apiKeys: [],
              authenticators: [],
              oauthProviders: [{ providerName: 'facebook', oidcToken: third }],
              userTags: [],
            },
          ],
        },
        as,
      ),
    )
    expect(await storedEmail(h, created.userIds[0])).toEqual({ userEmail: other, unverified: true })
    expect(await lookup(h, other)).toBe(null)

    // A token whose provider says it verified the address does prove it, on the same path.
    const fourth = await authenticate(h, clientKey(), 'mallory-4', { email: VICTIM, email_verified: true })
    resultOf(
      'create_oauth_providers',
      await h.submit(
        'create_oauth_providers',
        { userId: account.userId, oauthProviders: [{ providerName: 'facebook', oidcToken: fourth }] },
        as,
      ),
    )
    expect(await storedEmail(h, account.userId)).toEqual({ userEmail: VICTIM, unverified: false })
    expect(await lookup(h, VICTIM)).toBe(account.organizationId)
  }, 60_000)
})
