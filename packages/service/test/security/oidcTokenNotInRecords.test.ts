// The service's OIDC token (oauth2_authenticate's answer) is a bearer credential for sign-up and
// linking: create_sub_organization (the auth proxy's /v1/signup), create_users and
// create_oauth_providers check its signature, organization and expiry, not who holds it, and take
// its e-mail claim as proof of the address. oauth2_authenticate's result and the intents of
// oauth_login, the sign-up and the links kept it verbatim, which get_activity shows to every reader
// of the organization (the ids are in every ACTIVITY_UPDATES delivery): a parent organization's
// non-root user, or a stolen read-only session, took a first-time user's token and signed up first
// with it, so the person's own logins landed in the taker's account. Now oauth2_authenticate answers
// it once (`shownOnce`) and the activities that redeem it show it emptied (`bearerParameters`), in
// records written before too; and one token makes at most one link.
import { decodeJwtClaims, type SessionClaims } from '@latchkey/protocol'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { s256Challenge } from '../../src/signin/oauth/pkce.ts'
import {
  createHarness,
  fakeClock,
  type Harness,
  resultOf,
  type Stamper,
  testKey,
} from '../../src/testing/harness.ts'
import { type OidcProvider, startOidcProvider } from '../oauth/startOidcProvider.ts'
import { CLIENT, clientKey, googleAt, proxyOf, REDIRECT } from './googleSignIn.ts'
import { announceActivities, announcedActivities, type Reader, supportUser } from './recordReaders.ts'

const verifier = `pkce-verifier-${'x'.repeat(40)}`

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

async function service(): Promise<Harness> {
  const h = await createHarness({ clock: fakeClock(Date.now()), oauth: googleAt(idp) })
  harnesses.push(h)
  return h
}

/** A Google sign-in through the auth proxy: the person's own OIDC token, bound to their own key. */
async function authenticate(h: Harness, key: { nonce: string }, account: string): Promise<string> {
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
    provider: 'OAUTH2_PROVIDER_GOOGLE',
    authCode: code,
    redirectUri: REDIRECT,
    codeVerifier: verifier,
    nonce: key.nonce,
    clientId: CLIENT.client_id,
  })
  expect(auth.status).toBe(200)
  const token = auth.body.oidcToken as string
  // The answer carries it (what the published clients read).
  expect(token.split('.')).toHaveLength(3)
  return token
}

const sessionHeader = (token: string): Stamper => ({ stamp: () => ['X-Session', token] as [string, string] })

/** The activity types whose record, as `reader` is shown it, carries `token` (ids from the deliveries). */
async function tokensInRecords(h: Harness, reader: Reader, token: string): Promise<string[]> {
  const { activities, listed } = await announcedActivities(h, reader)
  // No delivery body carries it (the leak is the record, not the webhook).
  expect(listed).not.toContain(token)
  expect(activities.length).toBeGreaterThan(0)
  const found: string[] = []
  let read = 0
  for (const { activityId, activityType } of activities) {
    // A sub-organization's activities are announced to its parent too, and read in the sub-organization.
    const record = await h.query('get_activity', { activityId }, reader)
    if (record.status === 404) continue
    expect(record.status).toBe(200)
    read++
    if (JSON.stringify(record.body).includes(token)) found.push(activityType)
  }
  expect(read).toBeGreaterThan(0)
  return [...new Set(found)]
}

/** The stored activity rows (any organization) that carry `token`. */
async function storedWith(h: Harness, token: string, organizationIds: string[]): Promise<string[]> {
  const rows = (
    await Promise.all(organizationIds.map((id) => h.service.store.findBy('activities', 'organizationId', id)))
  ).flat()
  return rows.filter((row) => JSON.stringify(row).includes(token)).map((row) => row.path)
}

describe('an OIDC token is not readable from activity records (nor links twice)', () => {
  it("a parent organization's non-root user takes no first-time user's OIDC token from oauth2_authenticate's record to sign up first as them", async () => {
    const h = await service()
    await announceActivities(h)
    const staff = await supportUser(h)
    const call = proxyOf(h)

    // The person starts the published Google sign-in: oauth2_authenticate, then the account lookup.
    const victim = clientKey()
    const victimToken = await authenticate(h, victim, 'victim')
    expect((await call('account', { filterType: 'OIDC_TOKEN', filterValue: victimToken })).body).toEqual({
      organizationId: null,
    })

    // The support user reads oauth2_authenticate's record (its id from the deliveries).
    const leakedFrom = await tokensInRecords(h, staff, victimToken)
    const stolen = leakedFrom.length > 0 ? victimToken : undefined

    let hijack: Record<string, unknown> | undefined
    if (stolen) {
      // The taker signs up first at the public proxy with the token (and the e-mail it proves),
      // bringing a session key of its own, and adds a key it keeps.
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
      expect(signup.status).toBe(200)
      const attackerOrg = signup.body.organizationId as string
      const permanent = testKey()
      resultOf(
        'create_api_keys',
        await h.submit(
          'create_api_keys',
          { userId: signup.body.userId, apiKeys: [permanent.apiKey('attacker-permanent')] },
          { as: attacker, organizationId: attackerOrg },
        ),
      )
      // The person carries on: the lookup finds the taker's account, their sign-up is refused
      // ("log in instead"), and their own login lands in the taker's account.
      const found = await call('account', { filterType: 'OIDC_TOKEN', filterValue: victimToken })
      const victimSignup = await call('signup', {
        userName: 'victim',
        userEmail: 'victim@example.com',
        oauthProviders: [{ providerName: 'google', oidcToken: victimToken }],
      })
      const login = await call('oauth_login', { oidcToken: victimToken, publicKey: victim.publicKey })
      expect(login.status).toBe(200)
      const session = decodeJwtClaims<SessionClaims>(login.body.session as string)
      const wallet = resultOf(
        'create_wallet',
        await h.submit(
          'create_wallet',
          { walletName: 'savings', accounts: [], mnemonicLength: 12 },
          { as: victim, organizationId: session.organization_id },
        ),
      )
      const seenByAttacker = await h.query('list_wallets', {}, { as: permanent, organizationId: attackerOrg })
      hijack = {
        accountFound: found.body.organizationId === attackerOrg,
        victimSignupStatus: victimSignup.status,
        victimLoggedIntoAttackerAccount: session.organization_id === attackerOrg,
        attackerSeesVictimWallet: JSON.stringify(seenByAttacker.body).includes(wallet.walletId as string),
      }
    }
    expect({ leakedFrom, hijack }).toEqual({ leakedFrom: [], hijack: undefined })

    // Control: the person's own published sign-up, then login with the same token, still work.
    const signup = await call('signup', {
      userName: 'victim',
      userEmail: 'victim@example.com',
      oauthProviders: [{ providerName: 'google', oidcToken: victimToken }],
    })
    expect(signup.status).toBe(200)
    const login = await call('oauth_login', { oidcToken: victimToken, publicKey: victim.publicKey })
    expect(login.status).toBe(200)
    const session = decodeJwtClaims<SessionClaims>(login.body.session as string)
    expect(session.organization_id).toBe(signup.body.organizationId)
    // Nor do the sign-up's records show it to the support user.
    expect(await tokensInRecords(h, staff, victimToken)).toEqual([])
  })

  it("a stolen read-only session takes no OIDC token from oauth_login's and create_oauth_providers' records", async () => {
    const h = await service()
    const call = proxyOf(h)
    // A user who already has an account (an API key here) links Google to it.
    const durable = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [durable] })
    const owner = { as: durable, organizationId }
    await announceActivities(h, owner)
    const key = clientKey()
    const linkToken = await authenticate(h, key, 'owner')
    resultOf(
      'create_oauth_providers',
      await h.submit(
        'create_oauth_providers',
        { userId: userIds[0], oauthProviders: [{ providerName: 'google', oidcToken: linkToken }] },
        owner,
      ),
    )
    // Later the owner logs in with Google (a fresh token) and opens a read-only session a thief steals.
    const session = clientKey()
    h.clock.advance(1000)
    const loginToken = await authenticate(h, session, 'owner')
    const login = await call('oauth_login', { oidcToken: loginToken, publicKey: session.publicKey })
    expect(login.status).toBe(200)
    const ro = resultOf(
      'create_read_only_session',
      await h.submit('create_read_only_session', {}, { as: session, organizationId }),
    )
    const thief = { as: sessionHeader(ro.session as string), organizationId }

    const leaked = [
      ...(await tokensInRecords(h, thief, linkToken)),
      ...(await tokensInRecords(h, thief, loginToken)),
    ].sort()
    expect(leaked).toEqual([])
  })

  it('no stored record keeps an OIDC token (sign-up, logins, the refused one included, create_users); one recorded before is shown emptied', async () => {
    const h = await service()
    const call = proxyOf(h)
    const person = clientKey()
    const token = await authenticate(h, person, 'someone')
    const signup = await call('signup', {
      userName: 'someone',
      oauthProviders: [{ providerName: 'google', oidcToken: token }],
    })
    expect(signup.status).toBe(200)
    const account = signup.body.organizationId as string
    expect((await call('oauth_login', { oidcToken: token, publicKey: person.publicKey })).status).toBe(200)
    const replay = await call('oauth_login', { oidcToken: token, publicKey: person.publicKey })
    expect(replay.status).toBe(401)
    // The operator's own user linked with a token (create_users in the top-level organization).
    const staffToken = await authenticate(h, clientKey(), 'staff')
    const created = resultOf(
      'create_users',
      await h.submit('create_users', {
        users: [
          {
            userName: 'staff',
            apiKeys: [],
            authenticators: [],
            oauthProviders: [{ providerName: 'google', oidcToken: staffToken }],
            userTags: [],
          },
        ],
      }),
    )
    expect(created.userIds).toHaveLength(1)

    const organizations = [h.organizationId, account]
    expect({
      signupToken: await storedWith(h, token, organizations),
      staffToken: await storedWith(h, staffToken, organizations),
    }).toEqual({ signupToken: [], staffToken: [] })
    const rows = (
      await Promise.all(organizations.map((id) => h.service.store.findBy('activities', 'organizationId', id)))
    ).flat()
    expect(
      rows
        .filter((row) => row.path === 'oauth_login')
        .map((row) => row.status)
        .sort(),
    ).toEqual(['ACTIVITY_STATUS_COMPLETED', 'ACTIVITY_STATUS_FAILED'])
    const usersRow = rows.find((row) => row.path === 'create_users')!
    const shownUsers = await h.query('get_activity', { activityId: usersRow.id })
    expect(JSON.stringify(shownUsers.body)).toContain('"oidcToken":""')

    // Records written before: oauth2_authenticate's result and oauth_login's intent, token and all.
    const authRow = rows.find((row) => row.path === 'oauth2_authenticate')!
    const loginRow = rows.find((row) => row.path === 'oauth_login')!
    await h.service.store.transaction(async (tx) => {
      await tx.put('activities', { ...authRow, result: { oidcToken: token } })
      await tx.put('activities', { ...loginRow, intent: { ...loginRow.intent, oidcToken: token } })
    })
    const shownAuth = await h.query('get_activity', { activityId: authRow.id })
    expect(shownAuth.status).toBe(200)
    expect(JSON.stringify(shownAuth.body)).not.toContain(token)
    const shownLogin = await h.query(
      'get_activity',
      { activityId: loginRow.id },
      { as: person, organizationId: account },
    )
    expect(shownLogin.status).toBe(200)
    expect(JSON.stringify(shownLogin.body)).not.toContain(token)
  })

  it('one OIDC token makes one link: a copy of it links no other account once the identity is unlinked', async () => {
    const h = await service()
    const call = proxyOf(h)
    const person = clientKey()
    const token = await authenticate(h, person, 'mover')
    const durable = testKey()
    const signup = await call('signup', {
      userName: 'mover',
      apiKeys: [{ apiKeyName: 'durable', publicKey: durable.publicKey, curveType: 'API_KEY_CURVE_P256' }],
      oauthProviders: [{ providerName: 'google', oidcToken: token }],
    })
    expect(signup.status).toBe(200)
    // The published flow logs in with the same token right after signing up.
    const login = await call('oauth_login', { oidcToken: token, publicKey: person.publicKey })
    expect(login.status).toBe(200)
    const account = { as: durable, organizationId: signup.body.organizationId as string }
    const providers = await h.service.store.findBy('oauthProviders', 'organizationId', account.organizationId)
    resultOf(
      'delete_oauth_providers',
      await h.submit(
        'delete_oauth_providers',
        { userId: signup.body.userId, providerIds: providers.map((row) => row.id) },
        account,
      ),
    )
    // Someone holding a copy of the token links it to their own account: refused, naming the field.
    const other = testKey()
    const theirs = await h.createSubOrganization({ keys: [other] })
    const link = await h.submit(
      'create_oauth_providers',
      { userId: theirs.userIds[0], oauthProviders: [{ providerName: 'google', oidcToken: token }] },
      { as: other, organizationId: theirs.organizationId },
    )
    expect(link.status).toBe(401)
    expect(JSON.stringify(link.body)).toContain('OIDC_TOKEN_REPLAYED')
    expect(JSON.stringify(link.body)).toContain('parameters.oauthProviders[0].oidcToken')
    // A fresh sign-in links the identity there.
    h.clock.advance(1000)
    const fresh = await authenticate(h, clientKey(), 'mover')
    resultOf(
      'create_oauth_providers',
      await h.submit(
        'create_oauth_providers',
        { userId: theirs.userIds[0], oauthProviders: [{ providerName: 'google', oidcToken: fresh }] },
        { as: other, organizationId: theirs.organizationId },
      ),
    )
  })

  it('control: a leaked token of a user who already signed up logs nobody else in, links nowhere, and is spent by its login', async () => {
    const h = await service()
    const call = proxyOf(h)
    const victim = clientKey()
    const token = await authenticate(h, victim, 'settled')
    const signup = await call('signup', {
      userName: 'settled',
      oauthProviders: [{ providerName: 'google', oidcToken: token }],
    })
    expect(signup.status).toBe(200)
    // The nonce binds the login to the person's key: another key is refused.
    const attacker = clientKey()
    const theirs = await call('oauth_login', { oidcToken: token, publicKey: attacker.publicKey })
    expect(theirs.status).toBe(401)
    expect(JSON.stringify(theirs.body)).toMatch(/NONCE_MISMATCH|nonce/)
    // A second sign-up with it (the identity is linked) is refused.
    const again = await call('signup', {
      userName: 'attacker',
      apiKeys: [
        {
          apiKeyName: 'a',
          publicKey: attacker.publicKey,
          curveType: 'API_KEY_CURVE_P256',
          expirationSeconds: '900',
        },
      ],
      oauthProviders: [{ providerName: 'google', oidcToken: token }],
    })
    expect(again.status).toBe(409)
    // The person's login works once; a replay is refused.
    expect((await call('oauth_login', { oidcToken: token, publicKey: victim.publicKey })).status).toBe(200)
    const replay = await call('oauth_login', { oidcToken: token, publicKey: victim.publicKey })
    expect(replay.status).toBe(401)
    expect(JSON.stringify(replay.body)).toContain('OIDC_TOKEN_REPLAYED')
    // Past its lifetime (600 s) it links nothing.
    h.clock.advance(601_000)
    const late = await call('signup', {
      userName: 'late',
      apiKeys: [
        {
          apiKeyName: 'a',
          publicKey: attacker.publicKey,
          curveType: 'API_KEY_CURVE_P256',
          expirationSeconds: '900',
        },
      ],
      oauthProviders: [{ providerName: 'google', oidcToken: token }],
    })
    expect(late.status).toBe(401)
  })
})
