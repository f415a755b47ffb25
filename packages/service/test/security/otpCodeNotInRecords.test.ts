// verify_otp kept the one-time code it checks (`otpCode`) verbatim in its intent, which
// get_activity shows to every reader of the organization it is recorded in: for the auth proxy's
// /v1/otp_verify (and /v1/otp_verify_v2, which opens the bundle and submits the code) that is the
// parent organization. A code is spent when it verifies, but a verify_otp refused before the code
// is compared (OTP_RATE_LIMITED: the contact's wrong-guess budget, which anyone can fill from the
// public proxy) left a correct, unspent code in a FAILED record. A parent organization's non-root
// support user read it, waited for a guess to leave the window and verified it for a token bound
// to no key: a read-write login as the end user. Now the code is a bearer parameter of verify_otp
// (cleared from its record once it ends, never shown). The published flow (verify, then sign up)
// is the set-up.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type Json, testKey } from '../../src/testing/harness.ts'
import { announceActivities, announcedIds, supportUser } from './recordReaders.ts'

const APP = 'http://app.test'
const MINUTE = 60_000
const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

async function call(
  h: Harness,
  path: string,
  body: unknown,
  address = '203.0.113.9',
): Promise<{ status: number; body: Json }> {
  const res = await h.service.app.request(
    `/v1/${path}`,
    {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
        Origin: APP,
      },
      body: JSON.stringify(body),
    },
    { incoming: { socket: { remoteAddress: address } } },
  )
  return { status: res.status, body: await res.json() }
}

async function outbox(h: Harness, contact: string) {
  const res = await h.service.app.request(`/dev/outbox.json?contact=${encodeURIComponent(contact)}`)
  return ((await res.json()) as { messages: { code: string; otpId: string }[] }).messages
}

async function codeFor(h: Harness, email: string, address: string): Promise<{ otpId: string; code: string }> {
  const init = await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email }, address)
  expect(init.status).toBe(200)
  const message = (await outbox(h, email)).find((m) => m.otpId === init.body.otpId)
  expect(message).toBeDefined()
  return { otpId: init.body.otpId as string, code: message!.code }
}

/** A wrong code for `otpId` (the right one is `right`). */
const wrong = (right: string) => (right === '000000' ? '111111' : '000000')

describe('verify_otp keeps no one-time code a reader of its record could redeem', () => {
  it("a parent organization's non-root user takes an end user's rate-limited code from verify_otp's record and logs in as them", async () => {
    const h = await createHarness()
    harnesses.push(h)
    // The operator's organization: ACTIVITY_UPDATES deliveries (where readers find activity ids)
    // and a support tool's user, not a root user, no policy.
    await announceActivities(h)
    const staff = await supportUser(h)

    // An end user signed up with this address (the published proxy sign-up).
    const email = 'victim@example.com'
    const victimAddress = '198.51.100.7'
    const first = await codeFor(h, email, victimAddress)
    const verified = await call(h, 'otp_verify', { otpId: first.otpId, otpCode: first.code }, victimAddress)
    expect(verified.status).toBe(200)
    const signup = await call(
      h,
      'signup',
      {
        userEmail: email,
        verificationToken: verified.body.verificationToken,
        apiKeys: [
          {
            apiKeyName: 'session',
            publicKey: testKey().publicKey,
            curveType: 'API_KEY_CURVE_P256',
            expirationSeconds: '900',
          },
        ],
        authenticators: [],
        oauthProviders: [],
      },
      victimAddress,
    )
    expect(signup.status).toBe(200)
    const account = signup.body.organizationId as string
    h.clock.advance(30 * MINUTE)

    // The attacker fills the address's wrong-guess budget (10 in 10 minutes) from the public
    // proxy, one guess early so that one slot frees a little later.
    const attackerAddress = '192.0.2.66'
    const a = await codeFor(h, email, attackerAddress)
    const early = await call(h, 'otp_verify', { otpId: a.otpId, otpCode: wrong(a.code) }, attackerAddress)
    expect(JSON.stringify(early.body)).toContain('wrong code')
    h.clock.advance(9 * MINUTE + 30_000)
    for (let round = 0; round < 2; round++) {
      const b = await codeFor(h, email, attackerAddress)
      for (let i = 0; i < (round === 0 ? 5 : 4); i++) {
        const r = await call(h, 'otp_verify', { otpId: b.otpId, otpCode: wrong(b.code) }, attackerAddress)
        expect(r.status, JSON.stringify(r.body)).toBeGreaterThanOrEqual(400)
        expect(JSON.stringify(r.body)).not.toContain('OTP_RATE_LIMITED')
      }
    }

    // The end user signs in: the right code, refused for the contact's budget (not compared).
    h.clock.advance(5_000)
    const login = await codeFor(h, email, victimAddress)
    const refused = await call(h, 'otp_verify', { otpId: login.otpId, otpCode: login.code }, victimAddress)
    expect(JSON.stringify(refused.body)).toContain('OTP_RATE_LIMITED')

    // The support user finds verify_otp's records in the deliveries and reads them.
    const ids = await announcedIds(h, staff, (type) => type.startsWith('ACTIVITY_TYPE_VERIFY_OTP'))
    expect(ids.length).toBeGreaterThan(0)
    let stolen: { otpId: string; otpCode: string } | undefined
    for (const activityId of ids) {
      const record = await h.query('get_activity', { activityId }, staff)
      expect(record.status).toBe(200)
      const intent = Object.values(record.body.activity.intent)[0] as { otpId: string; otpCode?: string }
      if (
        record.body.activity.status === 'ACTIVITY_STATUS_FAILED' &&
        intent.otpId === login.otpId &&
        intent.otpCode
      )
        stolen = { otpId: intent.otpId, otpCode: intent.otpCode }
    }

    let loggedIn: { userId?: string; wallet?: number } | undefined
    if (stolen) {
      // Once the early guess leaves the window, one slot is free: the code is still live.
      h.clock.advance(30_000)
      const token = await call(h, 'otp_verify', stolen, '192.0.2.67')
      expect(token.status).toBe(200)
      const thiefKey = testKey()
      const session = await call(
        h,
        'otp_login',
        { verificationToken: token.body.verificationToken, publicKey: thiefKey.publicKey },
        '192.0.2.67',
      )
      expect(session.status).toBe(200)
      const whoami = await h.query('whoami', {}, { as: thiefKey, organizationId: account })
      const [endUser] = await h.service.store.findBy('users', 'organizationId', account)
      expect(whoami.body?.userId).toBe(endUser!.id)
      const wallet = await h.submit(
        'create_wallet',
        { walletName: 'thief', accounts: [], mnemonicLength: 12 },
        { as: thiefKey, organizationId: account },
      )
      loggedIn = { userId: whoami.body?.userId, wallet: wallet.status }
    }
    expect({ codeInRecord: stolen !== undefined, loggedInAsEndUser: loggedIn }).toEqual({
      codeInRecord: false,
      loggedInAsEndUser: undefined,
    })
  })
})
