import { beforeEach, describe, expect, it } from 'vitest'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Reply,
  resultOf,
  type TestKey,
  testKey,
} from '../testing/harness.ts'
import { latestCode } from '../testing/latestCode.ts'
import { maskContact } from './contactFactor.ts'

/**
 * E-mail and SMS codes as a second factor, by attack: the code goes only to the user's verified
 * contact, proves only the activity it was sent for, by its submitter, once; guesses are bounded.
 */

let h: Harness
let org: string
let userA: string
let userB: string
let keyA: TestKey
let keyB: TestKey
const A_EMAIL = 'ada@example.com'
const A_PHONE = '+14155550142'

beforeEach(async () => {
  h = await createHarness()
  keyA = testKey()
  keyB = testKey()
  // Contacts the parent organization sets are vouched for (verified).
  const reply = await h.submit('create_sub_organization', {
    subOrganizationName: 'Contacts',
    rootUsers: [
      { userName: 'Ada', userEmail: A_EMAIL, userPhoneNumber: A_PHONE, key: keyA },
      { userName: 'Bob', userEmail: 'bob@example.com', key: keyB },
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
  ;[userA, userB] = result.rootUserIds as [string, string]
})

const submitAs = (
  key: TestKey,
  path: Parameters<Harness['submit']>[0],
  params: unknown,
  organizationId = org,
) => {
  h.clock.advance(1)
  return h.submit(path, params, { as: key, organizationId })
}
const codeOf = (reply: Reply) => reply.body.errorCode ?? reply.body.details?.errorCode
const fieldOf = (reply: Reply) => reply.body.details?.field
const EMAIL_STEP = [{ any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }] }]
const SMS_STEP = [{ any: [{ type: 'AUTHENTICATION_TYPE_SMS_OTP' }] }]

async function policyOn(key: TestKey, userId: string, steps: unknown) {
  return submitAs(key, 'create_mfa_policy', {
    userId,
    mfaPolicyName: 'wallets need a code',
    condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
    requiredAuthenticationMethods: steps,
    order: 0,
  })
}
const newWallet = async (key: TestKey, name = 'w') => {
  const held = await submitAs(key, 'create_wallet', { walletName: name, accounts: [ETHEREUM_ACCOUNT] })
  expect(held.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
  return held.body.activity.fingerprint as string
}
const walletCount = async (key: TestKey) =>
  (
    (await h.query('list_wallets', { organizationId: org }, { as: key, organizationId: org })).body
      .wallets as unknown[]
  ).length
const sendCode = (
  key: TestKey,
  fingerprint: string,
  type = 'AUTHENTICATION_TYPE_EMAIL_OTP',
  organizationId = org,
) => submitAs(key, 'latchkey_send_mfa_code', { fingerprint, type }, organizationId)
const satisfy = (key: TestKey, fingerprint: string, contactCode: string, organizationId = org) =>
  submitAs(key, 'latchkey_satisfy_mfa', { fingerprint, contactCode }, organizationId)

describe('an e-mail or SMS code as a second factor', () => {
  it('goes to the verified address, then proves the held activity once; a wrong code and a replay are refused', async () => {
    resultOf('create_mfa_policy', await policyOn(keyA, userA, EMAIL_STEP))
    const fingerprint = await newWallet(keyA)
    const sent = await sendCode(keyA, fingerprint)
    expect(resultOf('latchkey_send_mfa_code', sent)).toEqual({ sentTo: 'a***@example.com' })
    const code = await latestCode(h.service, A_EMAIL)
    const wrong = code === '000000' ? '111111' : '000000'
    const refused = await satisfy(keyA, fingerprint, wrong)
    expect([codeOf(refused), fieldOf(refused)]).toEqual(['OTP_INVALID', 'parameters.contactCode'])
    expect(await walletCount(keyA)).toBe(0)
    const done = await satisfy(keyA, fingerprint, code)
    expect(done.body.activity.status, JSON.stringify(done.body)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await walletCount(keyA)).toBe(1)
    // The same code again, on this activity or on the next one: spent and unbound.
    expect(codeOf(await satisfy(keyA, fingerprint, code))).toBe('ACTIVITY_NOT_VOTABLE')
    const next = await newWallet(keyA, 'w2')
    const replayed = await satisfy(keyA, next, code)
    expect([replayed.status, fieldOf(replayed)]).toEqual([409, 'parameters.contactCode'])
    expect(await walletCount(keyA)).toBe(1)
  })

  it('an SMS step is proven by a code to the verified phone; an e-mail code does not prove it', async () => {
    resultOf('create_mfa_policy', await policyOn(keyA, userA, SMS_STEP))
    const fingerprint = await newWallet(keyA)
    const email = await sendCode(keyA, fingerprint)
    expect([email.status, fieldOf(email)]).toEqual([400, 'parameters.type'])
    expect(
      resultOf('latchkey_send_mfa_code', await sendCode(keyA, fingerprint, 'AUTHENTICATION_TYPE_SMS_OTP')),
    ).toEqual({ sentTo: `+1415${'*'.repeat(5)}42` })
    const done = await satisfy(keyA, fingerprint, await latestCode(h.service, A_PHONE))
    expect(done.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
  })

  it('a code sent for one activity does not prove another, even the same user\u2019s', async () => {
    resultOf('create_mfa_policy', await policyOn(keyA, userA, EMAIL_STEP))
    const first = await newWallet(keyA, 'one')
    const second = await newWallet(keyA, 'two')
    resultOf('latchkey_send_mfa_code', await sendCode(keyA, first))
    const forFirst = await latestCode(h.service, A_EMAIL)
    h.clock.advance(60_000)
    resultOf('latchkey_send_mfa_code', await sendCode(keyA, second))
    const crossed = await satisfy(keyA, second, forFirst)
    expect(codeOf(crossed)).toBe('OTP_INVALID')
    expect(await walletCount(keyA)).toBe(0)
    const done = await satisfy(keyA, second, await latestCode(h.service, A_EMAIL))
    expect(done.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await walletCount(keyA)).toBe(1)
  })

  it('another user of the organization and an attacker of another sub-organization can neither send nor spend it', async () => {
    resultOf('create_mfa_policy', await policyOn(keyA, userA, EMAIL_STEP))
    const fingerprint = await newWallet(keyA)
    // B, a root user of the same organization, holding no policy: refused before anything is sent.
    const bSends = await sendCode(keyB, fingerprint)
    expect(bSends.status).toBe(403)
    expect(() => latestCode(h.service, 'bob@example.com')).rejects.toThrow()
    resultOf('latchkey_send_mfa_code', await sendCode(keyA, fingerprint))
    const code = await latestCode(h.service, A_EMAIL)
    expect((await satisfy(keyB, fingerprint, code)).status).toBe(403)
    // An attacker's own sub-organization does not know the activity at all.
    const attacker = await h.createSubOrganization()
    const theirs = attacker.keys[0]!
    expect((await sendCode(theirs, fingerprint, undefined, attacker.organizationId)).status).toBe(404)
    expect((await satisfy(theirs, fingerprint, code, attacker.organizationId)).status).toBe(404)
    expect((await satisfy(theirs, fingerprint, code)).status).toBe(403)
    // None of that spent A's code.
    expect((await satisfy(keyA, fingerprint, code)).body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(userB).not.toBe(userA)
  })

  it('bounds guesses per user: after the budget a right code is refused', async () => {
    resultOf('create_mfa_policy', await policyOn(keyA, userA, EMAIL_STEP))
    const fingerprint = await newWallet(keyA)
    resultOf('latchkey_send_mfa_code', await sendCode(keyA, fingerprint))
    const code = await latestCode(h.service, A_EMAIL)
    const wrong = code === '000000' ? '111111' : '000000'
    // The user's code budget (5) and the code's own guess budget: whichever ends first.
    const answers: string[] = []
    for (let i = 0; i < 6; i++) answers.push(codeOf(await satisfy(keyA, fingerprint, wrong)))
    expect(answers[0]).toBe('OTP_INVALID')
    expect(answers.at(-1)).toBe('OTP_ATTEMPTS_EXCEEDED')
    const limited = await satisfy(keyA, fingerprint, code)
    expect([limited.status, codeOf(limited)]).toEqual([429, 'OTP_ATTEMPTS_EXCEEDED'])
    expect(await walletCount(keyA)).toBe(0)
  })

  it('a policy needs a verified contact to name it, and names no id for it', async () => {
    const bob = await policyOn(keyB, userB, SMS_STEP)
    expect([bob.status, fieldOf(bob)]).toEqual([400, 'parameters.requiredAuthenticationMethods[0].any'])
    const named = await policyOn(keyA, userA, [{ any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP', id: 'x' }] }])
    expect([named.status, fieldOf(named)]).toEqual([
      400,
      'parameters.requiredAuthenticationMethods[0].any[0].id',
    ])
    // Once on, a policy holds changes of the contacts codes go to (removing the one it needs is
    // refused outright: contactGuard.test.ts).
    resultOf('create_mfa_policy', await policyOn(keyA, userA, EMAIL_STEP))
    const change = await submitAs(keyA, 'update_user_phone_number', { userId: userA, userPhoneNumber: '' })
    expect(change.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
  })

  it('masks what it answers', () => {
    expect(maskContact('grace@example.org')).toBe('g***@example.org')
    expect(maskContact('+447700900123')).toBe('+4477******23')
  })
})
