// A factor is confirmed under the user's policies only if it was made after the newest of them.
// The first rule (after the oldest) trusted any policy on the user as the one that approved the
// enrolment: a thief planted a do-nothing policy that the stolen session proves by itself, the
// enrolment it then "waited" for ran at once, and its factor, confirmed after the user turned MFA
// on, proved every TOTP step with the thief's secret.
import { base32nopad } from '@scure/base'
import { beforeEach, describe, expect, it } from 'vitest'
import { totp } from '../../src/mfa/totp.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  resultOf,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'

let h: Harness
let org: string
let user: string
let key: TestKey

beforeEach(async () => {
  h = await createHarness()
  key = testKey()
  const sub = await h.createSubOrganization({ keys: [key] })
  org = sub.organizationId
  user = sub.userIds[0]!
})

const submitAs = (path: Parameters<Harness['submit']>[0], params: unknown) => {
  h.clock.advance(1)
  return h.submit(path, params, { as: key, organizationId: org })
}

describe('a factor planted before the user turns MFA on', () => {
  it("is not confirmed once the user's policy is on, even when the thief first planted a policy its session proves", async () => {
    // The thief, holding the session (here: the user's API key) before MFA is on: a policy no
    // activity matches, whose one step the stolen credential itself proves (a session or the key).
    resultOf(
      'create_mfa_policy',
      await submitAs('create_mfa_policy', {
        userId: user,
        mfaPolicyName: 'Device check',
        condition: 'false',
        requiredAuthenticationMethods: [
          { any: [{ type: 'AUTHENTICATION_TYPE_SESSION' }, { type: 'AUTHENTICATION_TYPE_API_KEY' }] },
        ],
        order: 9,
      }),
    )
    // Then an enrolment: "held" by that policy, whose only step the submitting session proves.
    const planted = await submitAs('latchkey_create_totp_factor', { userId: user, factorName: 'planted' })
    expect(planted.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    const plantedResult = planted.body.activity.result.latchkeyCreateTotpFactorResult
    const plantedSecret = base32nopad.decode(plantedResult.secret)
    // Left unconfirmed (it looks like an abandoned enrolment of the user's).

    // Later the user enrols their own authenticator and turns MFA on for new wallets. (With a policy
    // on, the enrolment is held by every policy: the session proves the planted one; no other yet.)
    const own = resultOf(
      'latchkey_create_totp_factor',
      await submitAs('latchkey_create_totp_factor', { userId: user }),
    )
    const ownSecret = base32nopad.decode(own.secret)
    resultOf(
      'latchkey_confirm_totp_factor',
      await submitAs('latchkey_confirm_totp_factor', {
        userId: user,
        factorId: own.factorId,
        code: totp(ownSecret, h.clock.now()),
      }),
    )
    h.clock.advance(30_000)
    resultOf(
      'create_mfa_policy',
      await submitAs('create_mfa_policy', {
        userId: user,
        mfaPolicyName: 'wallets need a code',
        condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
        requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
        order: 0,
      }),
    )
    // Now (the attacker model: MFA on) the stolen session confirms the planted factor...
    h.clock.advance(30_000)
    const confirm = await submitAs('latchkey_confirm_totp_factor', {
      userId: user,
      factorId: plantedResult.factorId,
      code: totp(plantedSecret, h.clock.now()),
    })
    // ...and satisfies the user's policy with the thief's own secret.
    const held = await submitAs('create_wallet', { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] })
    expect(held.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    h.clock.advance(30_000)
    const forged = await submitAs('latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: totp(plantedSecret, h.clock.now()),
    })
    expect({
      confirm: [confirm.status, confirm.body.details?.field ?? confirm.body.activity?.status],
      forged: forged.body.activity?.status ?? forged.body.details?.errorCode ?? forged.body.errorCode,
    }).toEqual({ confirm: [400, 'parameters.factorId'], forged: 'OTP_INVALID' })
  })
})
