// A verification token is a bearer credential: one bound to no key (verify_otp without publicKey,
// the proxy's otp_verify without it) logs in, read-write, as the user holding its contact. verify_otp
// answers it once and never stores it, but the activities that redeem it (update_user_email /
// update_user_phone_number, create_sub_organization at sign-up, otp_login) kept it verbatim in their
// intent, which get_activity shows to every reader of the organization (the ids are in every
// ACTIVITY_UPDATES delivery): a stolen read-only session, a removed user or a parent organization's
// support user took it and logged in as the contact's user. Now their records show it emptied
// (`bearerParameters`): cleared once the activity has ended, hidden while it waits, and emptied when
// read in records written before.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { afterEach, describe, expect, it } from 'vitest'
import {
  createHarness,
  type Harness,
  type Json,
  resultOf,
  type Stamper,
  testKey,
} from '../../src/testing/harness.ts'
import { announceActivities, announcedActivities, announcedIds, supportUser } from './recordReaders.ts'

const APP = 'http://app.test'
const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

async function call(h: Harness, path: string, body: unknown): Promise<{ status: number; body: Json }> {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: APP,
    },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: await res.json() }
}

async function outbox(h: Harness, contact: string) {
  const res = await h.service.app.request(`/dev/outbox.json?contact=${encodeURIComponent(contact)}`)
  return ((await res.json()) as { messages: { code: string; otpId: string }[] }).messages
}

/** The proxy's OTP step with no key (an unbound token, as verify_otp allows). */
async function unboundToken(h: Harness, email: string): Promise<string> {
  const init = await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
  expect(init.status).toBe(200)
  const [message] = await outbox(h, email)
  const verify = await call(h, 'otp_verify', { otpId: init.body.otpId, otpCode: message!.code })
  expect(verify.status).toBe(200)
  h.clock.advance(1000)
  return verify.body.verificationToken as string
}

const sessionHeader = (token: string): Stamper => ({ stamp: () => ['X-Session', token] as [string, string] })

describe('a verification token is not shown from the records of the activities that redeem it', () => {
  it('a stolen read-only session takes no token from update_user_email to log in read-write as the owner after logout', async () => {
    const h = await createHarness()
    harnesses.push(h)
    const durable = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [durable] })
    const owner = { as: durable, organizationId }
    await announceActivities(h, owner)
    // Browser A: a login session and the read-only session it opened, which the thief steals.
    const sessionKey = testKey()
    resultOf('stamp_login', await h.submit('stamp_login', { publicKey: sessionKey.publicKey }, owner))
    h.clock.advance(1)
    const ro = resultOf(
      'create_read_only_session',
      await h.submit('create_read_only_session', {}, { as: sessionKey, organizationId }),
    )
    const thief = { as: sessionHeader(ro.session), organizationId }

    // The owner adds an e-mail address proven by a code (the published updateUserEmail flow).
    const email = 'owner@example.com'
    const token = await unboundToken(h, email)
    resultOf(
      'update_user_email',
      await h.submit(
        'update_user_email',
        { userId: userIds[0], userEmail: email, verificationToken: token },
        owner,
      ),
    )

    // The thief lists the deliveries, finds the update's activity id and reads its record.
    const ids = await announcedIds(h, thief, (type) => type === 'ACTIVITY_TYPE_UPDATE_USER_EMAIL')
    expect(ids).toHaveLength(1)
    const record = await h.query('get_activity', { activityId: ids[0] }, thief)
    expect(record.status).toBe(200)
    const shown = JSON.stringify(record.body)
    const stolen = shown.includes(token) ? token : undefined

    // The owner logs browser A out: the stolen read-only session ends (control).
    const keys = (await h.query('get_api_keys', { userId: userIds[0] }, owner)).body.apiKeys as {
      apiKeyId: string
      credential: { publicKey: string }
    }[]
    const row = keys.find((key) => key.credential.publicKey === sessionKey.publicKey)!
    resultOf(
      'delete_api_keys',
      await h.submit('delete_api_keys', { userId: userIds[0], apiKeyIds: [row.apiKeyId] }, owner),
    )
    expect((await h.query('list_wallets', {}, thief)).status).toBe(401)

    let loggedIn: { status: number; userId?: string } | undefined
    if (stolen) {
      // The thief trades the token at the public proxy for a read-write session of its own key.
      const thiefKey = testKey()
      h.clock.advance(1000)
      const login = await call(h, 'otp_login', { verificationToken: stolen, publicKey: thiefKey.publicKey })
      const whoami = await h.query('whoami', {}, { as: thiefKey, organizationId })
      loggedIn = { status: whoami.status, userId: whoami.body?.userId }
      expect(whoami.body?.userId).toBe(userIds[0])
      // Read-write: it can act as the owner (here: create a wallet).
      if (login.status === 200) {
        const wallet = await h.submit(
          'create_wallet',
          { walletName: 'thief', accounts: [], mnemonicLength: 12 },
          { as: thiefKey, organizationId },
        )
        loggedIn = { ...loggedIn, status: wallet.status === 200 ? 200 : loggedIn.status }
      }
    }
    expect({ tokenInRecord: stolen !== undefined, loggedInAsOwner: loggedIn }).toEqual({
      tokenInRecord: false,
      loggedInAsOwner: undefined,
    })
  })

  it("a parent organization's non-root user takes no sign-up token from create_sub_organization to log in to the new account", async () => {
    const h = await createHarness()
    harnesses.push(h)
    await announceActivities(h)
    const staff = await supportUser(h)
    // An end user signs up at the auth proxy with an e-mail code and a passkey-less session key.
    const email = 'enduser@example.com'
    const token = await unboundToken(h, email)
    const userKey = testKey()
    const signup = await call(h, 'signup', {
      userEmail: email,
      verificationToken: token,
      apiKeys: [
        {
          apiKeyName: 'session',
          publicKey: userKey.publicKey,
          curveType: 'API_KEY_CURVE_P256',
          expirationSeconds: '900',
        },
      ],
      authenticators: [],
      oauthProviders: [],
    })
    expect(signup.status).toBe(200)
    const account = signup.body.organizationId as string

    // The support user reads the sign-up's record (its id from the deliveries).
    const { activities, listed } = await announcedActivities(h, staff)
    const ids = activities
      .filter((a) => a.activityType.startsWith('ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION'))
      .map((a) => a.activityId)
    expect(ids.length).toBeGreaterThan(0)
    let stolen: string | undefined
    for (const activityId of ids) {
      const record = await h.query('get_activity', { activityId }, staff)
      expect(record.status).toBe(200)
      if (JSON.stringify(record.body).includes(token)) stolen = token
    }
    // No delivery body carries it (control: the leak is the record, not the webhook).
    expect(listed).not.toContain(token)

    let loggedIn: { status: number; userId?: string } | undefined
    if (stolen) {
      const thiefKey = testKey()
      h.clock.advance(1000)
      const login = await call(h, 'otp_login', { verificationToken: stolen, publicKey: thiefKey.publicKey })
      const whoami = await h.query('whoami', {}, { as: thiefKey, organizationId: account })
      loggedIn = { status: login.status === 200 ? whoami.status : login.status, userId: whoami.body?.userId }
      const [endUser] = await h.service.store.findBy('users', 'organizationId', account)
      expect(whoami.body?.userId).toBe(endUser!.id)
    }
    expect({ tokenInRecord: stolen !== undefined, loggedInToAccount: loggedIn }).toEqual({
      tokenInRecord: false,
      loggedInToAccount: undefined,
    })
  })
  it('a contact update waiting for consensus keeps its token to run with, shows it to no reader, and verifies the contact once approved', async () => {
    const h = await createHarness()
    harnesses.push(h)
    const { organizationId, userIds, keys } = await h.createSubOrganization({ users: 2, threshold: 2 })
    const [first, second] = [keys[0]!, keys[1]!]
    const email = 'shared@example.com'
    const token = await unboundToken(h, email)
    const pending = await h.submit(
      'update_user_email',
      { userId: userIds[0], userEmail: email, verificationToken: token },
      { as: first, organizationId },
    )
    expect(pending.status).toBe(200)
    expect(pending.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    expect(JSON.stringify(pending.body)).not.toContain(token)
    // The other root user, asked to approve, sees the change but not the token.
    const waiting = await h.query(
      'get_activity',
      { activityId: pending.body.activity.id },
      { as: second, organizationId },
    )
    expect(waiting.body.activity.intent.updateUserEmailIntent).toMatchObject({
      userEmail: email,
      verificationToken: '',
    })
    // The stored intent keeps it until the activity has run (it is parsed again from it).
    expect(
      (await h.service.store.get('activities', pending.body.activity.id))!.intent.verificationToken,
    ).toBe(token)
    const approved = await h.submit(
      'approve_activity',
      { fingerprint: pending.body.activity.fingerprint },
      { as: second, organizationId },
    )
    expect(approved.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(JSON.stringify(approved.body)).not.toContain(token)
    // Run with its token: the address is verified (no unverified copy).
    const user = (await h.service.store.get('users', userIds[0]!))!
    expect({ email: user.userEmail, unverified: user.userEmailUnverified }).toEqual({
      email,
      unverified: undefined,
    })
    const row = (await h.service.store.get('activities', pending.body.activity.id))!
    expect(row.intent).toMatchObject({ userEmail: email, verificationToken: '' })
  })

  it('neither a sign-up nor its logins, the refused one included, keep the token; one recorded before the fix is shown emptied', async () => {
    const h = await createHarness()
    harnesses.push(h)
    const email = 'someone@example.com'
    const token = await unboundToken(h, email)
    const userKey = testKey()
    const signup = await call(h, 'signup', {
      userEmail: email,
      verificationToken: token,
      apiKeys: [
        {
          apiKeyName: 'session',
          publicKey: userKey.publicKey,
          curveType: 'API_KEY_CURVE_P256',
          expirationSeconds: '900',
        },
      ],
      authenticators: [],
      oauthProviders: [],
    })
    expect(signup.status).toBe(200)
    const account = signup.body.organizationId as string
    // The published sign-up flow logs in with the same token; a second login with it is refused.
    const login = await call(h, 'otp_login', { verificationToken: token, publicKey: userKey.publicKey })
    expect(login.status).toBe(200)
    const refused = await call(h, 'otp_login', { verificationToken: token, publicKey: testKey().publicKey })
    expect(refused.status).toBeGreaterThanOrEqual(400)
    expect(refused.status).toBeLessThan(500)
    const logins = (await h.service.store.findBy('activities', 'organizationId', account)).filter(
      (row) => row.path === 'otp_login',
    )
    const signups = (await h.service.store.findBy('activities', 'organizationId', h.organizationId)).filter(
      (row) => row.path === 'create_sub_organization',
    )
    expect(logins.map((row) => row.status).sort()).toEqual([
      'ACTIVITY_STATUS_COMPLETED',
      'ACTIVITY_STATUS_FAILED',
    ])
    for (const row of [...logins, ...signups]) expect(JSON.stringify(row.intent)).not.toContain(token)
    // A record written before the fix, token and all: get_activity empties it.
    const [signupRow] = signups
    await h.service.store.transaction((tx) =>
      tx.put('activities', { ...signupRow!, intent: { ...signupRow!.intent, verificationToken: token } }),
    )
    const shown = await h.query('get_activity', { activityId: signupRow!.id })
    expect(shown.status).toBe(200)
    expect(JSON.stringify(shown.body)).not.toContain(token)
  })
})
