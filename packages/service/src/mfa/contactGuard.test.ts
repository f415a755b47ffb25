import { base32nopad } from '@scure/base'
import { beforeEach, describe, expect, it } from 'vitest'
import {
  createHarness,
  type Harness,
  type Reply,
  resultOf,
  type TestKey,
  testKey,
} from '../testing/harness.ts'
import { latestCode } from '../testing/latestCode.ts'
import { totp } from './totp.ts'

/**
 * An e-mail-only (or SMS-only) MFA policy never becomes unprovable: the verified contact it needs
 * cannot be removed or swapped for an unproven one, by its user or anyone else, unless the policy
 * also takes another method the user holds (the MFA wing's contact guard, kernel/contactGuard.ts).
 * The race with the policy's creation on two instances is in test/mfa/mfaAcrossInstances.test.ts.
 */

let h: Harness
let org: string
let ada: string
let keyA: TestKey
let keyB: TestKey
const A_EMAIL = 'ada@example.com'
const A_PHONE = '+14155550142'

/** Ada (verified e-mail and phone) and Bob, root users of a sub-organization, on a service of `options`. */
async function guarded(options: Parameters<typeof createHarness>[0] = {}) {
  h = await createHarness(options)
  keyA = testKey()
  keyB = testKey()
  // Contacts the parent organization sets are vouched for (verified). Bob is a second root user.
  const reply = await h.submit('create_sub_organization', {
    subOrganizationName: 'Guarded',
    rootUsers: [
      { userName: 'Ada', userEmail: A_EMAIL, userPhoneNumber: A_PHONE, key: keyA },
      { userName: 'Bob', key: keyB },
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
  ada = result.rootUserIds[0]
}

beforeEach(() => guarded())

const submitAs = (
  key: TestKey,
  path: Parameters<Harness['submit']>[0],
  params: unknown,
  organizationId = org,
) => {
  h.clock.advance(1)
  return h.submit(path, params, { as: key, organizationId })
}
const refusal = (reply: Reply) => ({
  status: reply.status,
  errorCode: reply.body.details?.errorCode,
  field: reply.body.details?.field,
})
const EMAIL = { type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }
const SMS = { type: 'AUTHENTICATION_TYPE_SMS_OTP' }
const TOTP = { type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }
const PASSKEY = { type: 'AUTHENTICATION_TYPE_PASSKEY' }

const policyOn = async (any: unknown[]) =>
  resultOf(
    'create_mfa_policy',
    await submitAs(keyA, 'create_mfa_policy', {
      userId: ada,
      mfaPolicyName: 'exports need a code',
      condition: "activity.action == 'EXPORT'",
      requiredAuthenticationMethods: [{ any }],
      order: 0,
    }),
  ).mfaPolicyId as string
const setEmail = (key: TestKey, userEmail: string, extra: Record<string, unknown> = {}) =>
  submitAs(key, 'update_user_email', { userId: ada, userEmail, ...extra })
const setPhone = (key: TestKey, userPhoneNumber: string) =>
  submitAs(key, 'update_user_phone_number', { userId: ada, userPhoneNumber })
const adaRow = async () => (await h.service.store.get('users', ada))!

/** A verification token for `contact`, bound to `key` (the auth proxy's OTP step). */
async function tokenFor(contact: string, key: TestKey) {
  const otpId = resultOf('init_otp', await h.submit('init_otp', { otpType: 'OTP_TYPE_EMAIL', contact })).otpId
  h.clock.advance(1000)
  const verify = await h.submit('verify_otp', {
    otpId,
    otpCode: await latestCode(h.service, contact),
    publicKey: key.publicKey,
  })
  h.clock.advance(1000)
  return resultOf('verify_otp', verify).verificationToken as string
}

async function enrolTotp() {
  const enrolled = resultOf(
    'latchkey_create_totp_factor',
    await submitAs(keyA, 'latchkey_create_totp_factor', { userId: ada }),
  )
  resultOf(
    'latchkey_confirm_totp_factor',
    await submitAs(keyA, 'latchkey_confirm_totp_factor', {
      userId: ada,
      factorId: enrolled.factorId,
      code: totp(base32nopad.decode(enrolled.secret), h.clock.now()),
    }),
  )
}

describe('the contact an MFA policy needs', () => {
  it('is not removed or swapped for an unproven one, by the user or another root user, under an e-mail-only policy', async () => {
    const policyId = await policyOn([EMAIL])
    // The user: refused at once (not held for a code it could only waste), naming the field.
    const own = await setEmail(keyA, '')
    expect(refusal(own)).toEqual({ status: 400, errorCode: 'FIELD_INVALID', field: 'parameters.userEmail' })
    expect(own.body.message).toContain(policyId)
    expect(own.body.message).toMatch(/only way .* can prove step 1/)
    // Another root user, whom no policy holds: refused in the run.
    expect(refusal(await setEmail(keyB, ''))).toMatchObject({ status: 400, field: 'parameters.userEmail' })
    // A swap for an address nobody proved leaves it unverified: the same loss.
    expect(refusal(await setEmail(keyB, 'mallory@example.com'))).toMatchObject({
      status: 400,
      field: 'parameters.userEmail',
    })
    expect(refusal(await setEmail(keyA, 'other@example.com'))).toMatchObject({ status: 400 })
    expect(await adaRow()).toMatchObject({ userEmail: A_EMAIL })
    expect((await adaRow()).userEmailUnverified).toBeUndefined()
    // The phone is not what the policy needs: removing it only waits for the policy, as before.
    expect((await setPhone(keyA, '')).body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    resultOf('update_user_phone_number', await setPhone(keyB, ''))
    expect((await adaRow()).userPhoneNumber).toBeUndefined()
  })

  it('an SMS-only policy keeps the phone; the e-mail can go', async () => {
    await policyOn([SMS])
    expect(refusal(await setPhone(keyB, ''))).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.userPhoneNumber',
    })
    expect(refusal(await setPhone(keyB, '+14155550199'))).toMatchObject({
      status: 400,
      field: 'parameters.userPhoneNumber',
    })
    expect(refusal(await setPhone(keyA, ''))).toMatchObject({
      status: 400,
      field: 'parameters.userPhoneNumber',
    })
    resultOf('update_user_email', await setEmail(keyB, ''))
    expect(await adaRow()).toMatchObject({ userPhoneNumber: A_PHONE })
  })

  it("a phone no SMS code can reach (outside the operator's countries) proves nothing: an SMS-only policy is refused, and the e-mail beside it stays", async () => {
    // Ada's phone is a US number; this service texts only UK numbers.
    await guarded({ smsBudget: { allowedCountries: ['GB'] } })
    const smsOnly = await submitAs(keyA, 'create_mfa_policy', {
      userId: ada,
      mfaPolicyName: 'exports need a code',
      condition: "activity.action == 'EXPORT'",
      requiredAuthenticationMethods: [{ any: [SMS] }],
      order: 0,
    })
    expect(refusal(smsOnly)).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.requiredAuthenticationMethods[0].any',
    })
    await policyOn([SMS, EMAIL])
    // The e-mail is the step's only reachable way: removing it is refused.
    expect(refusal(await setEmail(keyA, ''))).toMatchObject({ status: 400, field: 'parameters.userEmail' })
    expect(await adaRow()).toMatchObject({ userEmail: A_EMAIL })
  })

  it('goes when the policy also takes the other verified contact', async () => {
    await policyOn([EMAIL, SMS])
    resultOf('update_user_email', await setEmail(keyB, ''))
    // Now the phone is that policy's only way: it stays.
    expect(refusal(await setPhone(keyB, ''))).toMatchObject({
      status: 400,
      field: 'parameters.userPhoneNumber',
    })
    expect(await adaRow()).toMatchObject({ userPhoneNumber: A_PHONE })
  })

  it('a passkey method the user holds no passkey for is no way: refused; every policy on the user counts', async () => {
    await policyOn([EMAIL, PASSKEY])
    expect(refusal(await setEmail(keyB, ''))).toMatchObject({ status: 400, field: 'parameters.userEmail' })
    // Bob, a root user whom no policy holds, removes that policy; another on Ada still needs it.
    const [first] = (await h.service.store.findBy('mfaPolicies', 'userId', ada)).map((row) => row.id)
    resultOf(
      'delete_mfa_policy',
      await submitAs(keyB, 'delete_mfa_policy', { userId: ada, mfaPolicyId: first }),
    )
    await policyOn([SMS])
    const second = await policyOn([EMAIL])
    const refused = await setEmail(keyB, '')
    expect(refusal(refused)).toMatchObject({ status: 400, field: 'parameters.userEmail' })
    expect(refused.body.message).toContain(second)
  })

  it('goes when the user holds a TOTP factor the policy takes', async () => {
    await enrolTotp()
    await policyOn([EMAIL, TOTP])
    resultOf('update_user_email', await setEmail(keyB, ''))
    expect((await adaRow()).userEmail).toBeUndefined()
  })

  it('may be swapped for an address a verification token proves (it stays a verified contact)', async () => {
    await policyOn([EMAIL])
    const token = await tokenFor('new@example.com', keyB)
    resultOf('update_user_email', await setEmail(keyB, 'new@example.com', { verificationToken: token }))
    expect(await adaRow()).toMatchObject({ userEmail: 'new@example.com' })
    expect((await adaRow()).userEmailUnverified).toBeUndefined()
    // And a token bound to another key proves the address but leaves it unverified: refused.
    const stray = await tokenFor('stray@example.com', testKey())
    expect(refusal(await setEmail(keyB, 'stray@example.com', { verificationToken: stray }))).toMatchObject({
      status: 400,
      field: 'parameters.userEmail',
    })
    expect(await adaRow()).toMatchObject({ userEmail: 'new@example.com' })
  })

  it('the last API key an API-key-only policy needs is not deleted; with another way it goes', async () => {
    const API_KEY = { type: 'AUTHENTICATION_TYPE_API_KEY' }
    const policyId = await policyOn([API_KEY])
    const [adaKey] = (await h.service.store.findBy('apiKeys', 'userId', ada)).map((row) => row.id)
    const remove = () => submitAs(keyB, 'delete_api_keys', { userId: ada, apiKeyIds: [adaKey] })
    const refused = await remove()
    expect(refusal(refused)).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.apiKeyIds',
    })
    expect(refused.body.message).toContain(policyId)
    expect(await h.service.store.get('apiKeys', adaKey!)).toBeDefined()
    // A policy that also takes her verified e-mail leaves her a way: the key goes.
    const [only] = (await h.service.store.findBy('mfaPolicies', 'userId', ada)).map((row) => row.id)
    resultOf(
      'delete_mfa_policy',
      await submitAs(keyB, 'delete_mfa_policy', { userId: ada, mfaPolicyId: only }),
    )
    await policyOn([API_KEY, EMAIL])
    resultOf('delete_api_keys', await remove())
    expect(await h.service.store.get('apiKeys', adaKey!)).toBeUndefined()
  })

  it('an attacker of another sub-organization can neither remove it nor be stopped by this policy', async () => {
    await policyOn([EMAIL])
    const attacker = await h.createSubOrganization()
    const theirs = attacker.keys[0]!
    // Into the victim's organization: not theirs.
    expect((await setEmail(theirs, '')).status).toBe(403)
    // In their own organization, naming the victim: no such user there.
    const named = await submitAs(
      theirs,
      'update_user_email',
      { userId: ada, userEmail: '' },
      attacker.organizationId,
    )
    expect(refusal(named)).toMatchObject({ status: 404, field: 'parameters.userId' })
    expect(await adaRow()).toMatchObject({ userEmail: A_EMAIL })
    // Their own contact changes are not judged by a policy on someone else.
    resultOf(
      'update_user_email',
      await submitAs(
        theirs,
        'update_user_email',
        { userId: attacker.userIds[0]!, userEmail: 'x@example.com' },
        attacker.organizationId,
      ),
    )
  })
})
