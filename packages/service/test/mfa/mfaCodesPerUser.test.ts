// The e-mailed and texted MFA codes of a sub-organization's users are budgeted per user. They were
// charged to the sub-organization's one shared budget (`SUB_ORGANIZATION_SEND_LIMIT`: 5 a minute,
// 20 an hour), so one user of the account, asking codes only to their own address for their own
// held activity, spent it: every other user's MFA codes, and the account's `init_otp`, were
// refused for the rest of the hour. Now each user's MFA codes have that budget of their own
// (e-mail and SMS together: no user gets more than before), beside each contact's, and all the
// users of the account together at most 100 an hour (five users' worth), so an account that
// verified an address for each of many users cannot make the operator send 20 an hour a user.
import { beforeEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, resultOf, type TestKey, testKey } from '../../src/testing/harness.ts'

let h: Harness
let org: string
let owner: string
let member: string
let ownerKey: TestKey
let memberKey: TestKey

/** An account of an owner (its only root user) and a member, both with a verified e-mail and phone. */
beforeEach(async () => {
  h = await createHarness()
  ownerKey = testKey()
  memberKey = testKey()
  const reply = await h.submit('create_sub_organization', {
    subOrganizationName: 'Family',
    rootUsers: [
      { userName: 'Owner', userEmail: 'owner@example.com', userPhoneNumber: '+14155550100', key: ownerKey },
      {
        userName: 'Member',
        userEmail: 'member@example.com',
        userPhoneNumber: '+14155550101',
        key: memberKey,
      },
    ].map(({ key, ...user }) => ({
      ...user,
      apiKeys: [key.apiKey('key')],
      authenticators: [],
      oauthProviders: [],
    })),
    rootQuorumThreshold: 1,
  })
  const result = resultOf('create_sub_organization', reply)
  org = result.subOrganizationId
  ;[owner, member] = result.rootUserIds as [string, string]
  // The member is an ordinary (non-root) user of the account.
  resultOf(
    'update_root_quorum',
    await submitAs(ownerKey, 'update_root_quorum', { threshold: 1, userIds: [owner] }),
  )
  // Exporting a wallet needs an e-mailed or texted code, for both.
  for (const userId of [owner, member])
    resultOf(
      'create_mfa_policy',
      await submitAs(ownerKey, 'create_mfa_policy', {
        userId,
        mfaPolicyName: 'a code',
        condition: "activity.resource == 'WALLET' && activity.action == 'EXPORT'",
        requiredAuthenticationMethods: [
          { any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }, { type: 'AUTHENTICATION_TYPE_SMS_OTP' }] },
        ],
        order: 0,
      }),
    )
})

const submitAs = (key: TestKey, path: Parameters<Harness['submit']>[0], params: unknown) => {
  h.clock.advance(1)
  return h.submit(path, params, { as: key, organizationId: org })
}

/** A held activity of `key`'s user (any activity waits for their policies once they have one). */
async function heldOf(key: TestKey, userId: string): Promise<string> {
  const held = await submitAs(key, 'latchkey_create_totp_factor', { userId })
  expect(held.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
  return held.body.activity.fingerprint
}

type Channel = 'AUTHENTICATION_TYPE_EMAIL_OTP' | 'AUTHENTICATION_TYPE_SMS_OTP'
const EMAIL: Channel = 'AUTHENTICATION_TYPE_EMAIL_OTP'
const SMS: Channel = 'AUTHENTICATION_TYPE_SMS_OTP'
const send = (key: TestKey, fingerprint: string, type: Channel = EMAIL) =>
  submitAs(key, 'latchkey_send_mfa_code', { fingerprint, type })
const refusal = (reply: { status: number; body: { message?: string; details?: { errorCode?: string } } }) => [
  reply.status,
  reply.body.details?.errorCode,
  reply.body.message,
]

describe("a sub-organization's MFA codes", () => {
  it("one user's codes to their own address leave the other users' codes and the account's init_otp alone", async () => {
    const memberHeld = await heldOf(memberKey, member)
    const ownerHeld = await heldOf(ownerKey, owner)
    // Control: the owner gets a code.
    expect((await send(ownerKey, ownerHeld)).status).toBe(200)
    h.clock.advance(61 * 60_000)
    // The member asks codes to their own address within its own budget (5 per 10 minutes): 4
    // rounds of 5, 11 minutes apart, 20 in the hour.
    let memberSent = 0
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 5; i++) {
        if ((await send(memberKey, memberHeld)).status === 200) memberSent++
        h.clock.advance(20_000)
      }
      h.clock.advance(11 * 60_000)
    }
    expect(memberSent).toBe(20)
    // The owner still gets their MFA code, and the account's sign-in codes still go out.
    const ownerReply = await send(ownerKey, ownerHeld)
    expect([ownerReply.status, ownerReply.body.message]).toEqual([200, undefined])
    const initOtp = await submitAs(ownerKey, 'init_otp', {
      otpType: 'OTP_TYPE_EMAIL',
      contact: 'owner@example.com',
    })
    expect([initOtp.status, initOtp.body.message]).toEqual([200, undefined])
    // The member's own budget is spent: a 21st code in the hour is refused, though the address's is not.
    expect(refusal(await send(memberKey, memberHeld))).toEqual([
      429,
      'OTP_RATE_LIMITED',
      'too many codes requested by this user; try again later',
    ])
  })

  it("a user's e-mail and SMS codes share their one budget: at most 5 a minute and 20 an hour, as the account's was", async () => {
    const held = await heldOf(memberKey, member)
    // 3 e-mails and 2 texts a minute: within each contact's budget (3 a minute, 5 per 10 minutes).
    const round = async () => {
      const statuses: number[] = []
      for (const type of [EMAIL, SMS, EMAIL, SMS, EMAIL])
        statuses.push((await send(memberKey, held, type)).status)
      return statuses
    }
    expect(await round()).toEqual([200, 200, 200, 200, 200])
    // A sixth in the minute, by text (its number's budget has room), is the user's sixth.
    expect(refusal(await send(memberKey, held, SMS))).toEqual([
      429,
      'OTP_RATE_LIMITED',
      'too many codes requested by this user; try again later',
    ])
    for (let n = 1; n < 4; n++) {
      h.clock.advance(11 * 60_000)
      expect(await round()).toEqual([200, 200, 200, 200, 200])
    }
    // 20 in the hour: both channels are refused, each contact's own budget having room again.
    h.clock.advance(11 * 60_000)
    for (const type of [EMAIL, SMS])
      expect(refusal(await send(memberKey, held, type))).toEqual([
        429,
        'OTP_RATE_LIMITED',
        'too many codes requested by this user; try again later',
      ])
    // The owner's codes are the owner's.
    expect((await send(ownerKey, await heldOf(ownerKey, owner), SMS)).status).toBe(200)
  })
})

describe("an account's MFA codes together", () => {
  it('six users asking 20 codes each in an hour get 100 in all: the account-wide ceiling, which no one user reaches', async () => {
    // An account of six users, each with a verified address and a policy that needs a code.
    const keys = Array.from({ length: 6 }, () => testKey())
    const reply = await h.submit('create_sub_organization', {
      subOrganizationName: 'Many',
      rootUsers: keys.map((key, i) => ({
        userName: `User ${i}`,
        userEmail: `user${i}@example.com`,
        apiKeys: [key.apiKey('key')],
        authenticators: [],
        oauthProviders: [],
      })),
      rootQuorumThreshold: 1,
    })
    const result = resultOf('create_sub_organization', reply)
    const many = result.subOrganizationId
    const userIds = result.rootUserIds as string[]
    const as = (key: TestKey, path: Parameters<Harness['submit']>[0], params: unknown) => {
      h.clock.advance(1)
      return h.submit(path, params, { as: key, organizationId: many })
    }
    const held: string[] = []
    for (const [i, key] of keys.entries()) {
      resultOf(
        'create_mfa_policy',
        await as(key, 'create_mfa_policy', {
          userId: userIds[i],
          mfaPolicyName: 'a code',
          condition: "activity.resource == 'WALLET' && activity.action == 'EXPORT'",
          requiredAuthenticationMethods: [{ any: [{ type: EMAIL }] }],
          order: 0,
        }),
      )
      const waiting = await as(key, 'latchkey_create_totp_factor', { userId: userIds[i] })
      expect(waiting.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
      held.push(waiting.body.activity.fingerprint)
    }
    // Each user asks 5 codes to their own address in each of 4 rounds, within their address's
    // budget (5 per 10 minutes) and their own (20 an hour), 3 a minute across the account.
    const sent = keys.map(() => 0)
    const refusals = new Set<string>()
    for (let round = 0; round < 4; round++) {
      for (const [i, key] of keys.entries())
        for (let n = 0; n < 5; n++) {
          const answer = await as(key, 'latchkey_send_mfa_code', { fingerprint: held[i], type: EMAIL })
          if (answer.status === 200) sent[i]!++
          else refusals.add(JSON.stringify(refusal(answer)))
          h.clock.advance(20_000)
        }
      h.clock.advance(60_000)
    }
    expect(sent.reduce((a, b) => a + b, 0)).toBe(100)
    expect([...refusals]).toEqual([
      JSON.stringify([
        429,
        'OTP_RATE_LIMITED',
        "too many MFA codes requested by this organization's users; try again later",
      ]),
    ])
    // Refused only by the ceiling, in the last round: each user had at least 15, none over 20.
    expect(sent.every((n) => n >= 15 && n <= 20)).toBe(true)
  })
})
