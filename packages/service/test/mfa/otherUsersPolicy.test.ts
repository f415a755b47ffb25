// A root user's stolen session cannot lift another user's MFA policy without its own second
// factor: changing or removing an MFA policy on another user waits for every policy of the
// submitter, as an authority change does. It once ran at once, since the rule that a policy
// guards itself never matched for the submitter, and the other user was then free of the proof.
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
let victim: string
let insider: string
let victimKey: TestKey
let insiderKey: TestKey

beforeEach(async () => {
  h = await createHarness()
  victimKey = testKey()
  insiderKey = testKey()
  const sub = await h.createSubOrganization({ keys: [victimKey, insiderKey] })
  org = sub.organizationId
  ;[victim, insider] = sub.userIds as [string, string]
})

const submitAs = (key: TestKey, path: Parameters<Harness['submit']>[0], params: unknown) => {
  h.clock.advance(1)
  return h.submit(path, params, { as: key, organizationId: org })
}

async function enrolTotp(key: TestKey, userId: string) {
  const enrolled = resultOf(
    'latchkey_create_totp_factor',
    await submitAs(key, 'latchkey_create_totp_factor', { userId }),
  )
  const secret = base32nopad.decode(enrolled.secret)
  resultOf(
    'latchkey_confirm_totp_factor',
    await submitAs(key, 'latchkey_confirm_totp_factor', {
      userId,
      factorId: enrolled.factorId,
      code: totp(secret, h.clock.now()),
    }),
  )
  h.clock.advance(30_000)
  return secret
}

const TOTP_STEP = [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }]
const WALLETS = "activity.resource == 'WALLET' && activity.action == 'CREATE'"

async function policyOn(key: TestKey, userId: string, name: string) {
  return resultOf(
    'create_mfa_policy',
    await submitAs(key, 'create_mfa_policy', {
      userId,
      mfaPolicyName: name,
      condition: WALLETS,
      requiredAuthenticationMethods: TOTP_STEP,
      order: 0,
    }),
  ).mfaPolicyId as string
}

describe("a stolen session of a root user under MFA and another user's MFA policy", () => {
  it("cannot remove or weaken another user's MFA policy without the victim's second factor", async () => {
    // Both users enrol a factor; the organization puts a policy on each (set up by the victim
    // before the theft: the insider cannot remove their own, it waits for their policy).
    await enrolTotp(victimKey, victim)
    await enrolTotp(insiderKey, insider)
    const victimPolicy = await policyOn(victimKey, victim, 'victim: wallets need a code')
    const insiderPolicy = await policyOn(victimKey, insider, 'insider: wallets need a code')
    // The insider's own key is held by their policy, and cannot remove it by itself.
    const ownRemoval = await submitAs(insiderKey, 'delete_mfa_policy', {
      userId: insider,
      mfaPolicyId: insiderPolicy,
    })
    expect(ownRemoval.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    // The victim's stolen session, without the victim's code: removing the insider's policy is a
    // grant of authority (it lifts the proof that stopped the insider) and must wait for the
    // victim's policies, like delete_policy / create_users / update_root_quorum (AUTHORITY_CHANGES).
    const weakened = await submitAs(victimKey, 'update_mfa_policy', {
      userId: insider,
      mfaPolicyId: insiderPolicy,
      condition: 'false',
    })
    const removed = await submitAs(victimKey, 'delete_mfa_policy', {
      userId: insider,
      mfaPolicyId: insiderPolicy,
    })
    // What actually happened: both ran at once, without any second factor of the victim.
    const statuses = [weakened.body.activity?.status, removed.body.activity?.status]
    // The insider now creates wallets with no second factor at all.
    const wallet = await submitAs(insiderKey, 'create_wallet', {
      walletName: 'w',
      accounts: [ETHEREUM_ACCOUNT],
    })
    expect({
      statuses,
      insiderWallet: wallet.body.activity?.status,
      victimPolicy: Boolean(victimPolicy),
    }).toEqual({
      statuses: ['ACTIVITY_STATUS_AUTHENTICATORS_NEEDED', 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'],
      insiderWallet: 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
      victimPolicy: true,
    })
  })
})
