// A user's TOTP secret and recovery codes reach that user only. In an organization whose root
// quorum is 2, a root user's own enrolment once waited for consensus, and the co-root whose
// approving vote ran it was answered with the secret (or every recovery code), the user never:
// the voter then held the user's second factor. Now the enrolments never wait for the quorum
// (they act on the caller's own factors only), the user's own MFA policies still hold them for
// the user's own proof, and a vote of another user that runs an activity answers what it shows
// only once emptied, whatever the handler.
import { base32nopad } from '@scure/base'
import { beforeEach, describe, expect, it } from 'vitest'
import type { ActivityHandlers } from '../../src/kernel/registry.ts'
import { createRecoveryCodes } from '../../src/mfa/mfaFactors.ts'
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
let userA: string
let keyA: TestKey
let keyB: TestKey

/** A fresh service (`options` for it) and an organization of root users A and B, quorum 2. */
async function setUp(options: Parameters<typeof createHarness>[0] = {}) {
  h = await createHarness(options)
  keyA = testKey()
  keyB = testKey()
  const sub = await h.createSubOrganization({ keys: [keyA, keyB], threshold: 2 })
  org = sub.organizationId
  userA = sub.userIds[0]!
}

beforeEach(() => setUp())

const submitAs = (key: TestKey, path: Parameters<Harness['submit']>[0], params: unknown) => {
  h.clock.advance(1)
  return h.submit(path, params, { as: key, organizationId: org })
}
const queryAs = (key: TestKey, path: string, body: Record<string, unknown>) =>
  h.query(path, { organizationId: org, ...body }, { as: key })
const codeOf = (reply: { body: { details?: { errorCode?: string } } }) => reply.body.details?.errorCode

/** Submitted by A, approved by B (the quorum of 2): B's vote's answer. */
async function approvedByB(path: Parameters<Harness['submit']>[0], params: unknown) {
  const submitted = await submitAs(keyA, path, params)
  expect(submitted.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
  return submitAs(keyB, 'approve_activity', { fingerprint: submitted.body.activity.fingerprint })
}

const TOTP_STEP = [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }]

/** A's MFA policy on new wallets, proven by a TOTP code or a recovery code (made with B's vote). */
async function walletPolicyOnA() {
  const vote = await approvedByB('create_mfa_policy', {
    userId: userA,
    mfaPolicyName: 'wallets need a code',
    condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
    requiredAuthenticationMethods: TOTP_STEP,
    order: 0,
  })
  expect(vote.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
}

/** A's confirmed TOTP factor's secret. */
async function enrolA(): Promise<Uint8Array> {
  const enrolled = resultOf(
    'latchkey_create_totp_factor',
    await submitAs(keyA, 'latchkey_create_totp_factor', { userId: userA }),
  )
  const secret = base32nopad.decode(enrolled.secret)
  resultOf(
    'latchkey_confirm_totp_factor',
    await submitAs(keyA, 'latchkey_confirm_totp_factor', {
      userId: userA,
      factorId: enrolled.factorId,
      code: totp(secret, h.clock.now()),
    }),
  )
  h.clock.advance(30_000)
  return secret
}

/** A's wallet creation, held by A's policy after B's vote: its fingerprint. */
async function heldWallet(): Promise<string> {
  const submitted = await submitAs(keyA, 'create_wallet', { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] })
  const vote = await submitAs(keyB, 'approve_activity', { fingerprint: submitted.body.activity.fingerprint })
  expect(vote.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
  return submitted.body.activity.fingerprint
}

describe("a root user's own enrolment under a root quorum of 2", () => {
  it('recovery codes are answered to their user at once, and nothing waits for a co-root whose vote would be shown them', async () => {
    const made = await submitAs(keyA, 'latchkey_create_recovery_codes', { userId: userA })
    expect(made.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    const codes: string[] = made.body.activity.result.latchkeyCreateRecoveryCodesResult.recoveryCodes
    expect(codes).toHaveLength(10)
    // B has nothing to vote on, and A's record shows B no code.
    const vote = await submitAs(keyB, 'approve_activity', { fingerprint: made.body.activity.fingerprint })
    expect([vote.status, codeOf(vote)]).toEqual([412, 'ACTIVITY_NOT_VOTABLE'])
    const seenByB = await queryAs(keyB, 'get_activity', { activityId: made.body.activity.id })
    expect(seenByB.body.activity.result.latchkeyCreateRecoveryCodesResult.recoveryCodes).toEqual([])
    // Control: the codes A was shown are A's second factor (a TOTP-only policy, proven by one).
    await walletPolicyOnA()
    const fingerprint = await heldWallet()
    const proven = await submitAs(keyA, 'latchkey_satisfy_mfa', { fingerprint, recoveryCode: codes[0] })
    expect(proven.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
  })

  it('a TOTP secret is answered to its user at once, and nothing waits for a co-root whose vote would be shown it', async () => {
    const made = await submitAs(keyA, 'latchkey_create_totp_factor', { userId: userA })
    expect(made.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    const result = made.body.activity.result.latchkeyCreateTotpFactorResult
    expect(result.secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(result.otpauthUri).toContain(`secret=${result.secret}`)
    const vote = await submitAs(keyB, 'approve_activity', { fingerprint: made.body.activity.fingerprint })
    expect([vote.status, codeOf(vote)]).toEqual([412, 'ACTIVITY_NOT_VOTABLE'])
    const seenByB = await queryAs(keyB, 'get_activity', { activityId: made.body.activity.id })
    expect(seenByB.body.activity.result.latchkeyCreateTotpFactorResult).toMatchObject({
      secret: '',
      otpauthUri: '',
    })
    // Control: the secret A was shown confirms A's factor.
    const confirmed = await submitAs(keyA, 'latchkey_confirm_totp_factor', {
      userId: userA,
      factorId: result.factorId,
      code: totp(base32nopad.decode(result.secret), h.clock.now()),
    })
    expect(confirmed.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
  })

  it("once A has an MFA policy, A's enrolment waits for A's own code (not B's vote), and only A's proof is answered the codes", async () => {
    const secret = await enrolA()
    await walletPolicyOnA()
    const held = await submitAs(keyA, 'latchkey_create_recovery_codes', { userId: userA })
    expect(held.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    expect(held.body.activity.result).toEqual({})
    const fingerprint = held.body.activity.fingerprint
    // B can neither approve it nor prove it (B's own code is refused too).
    expect((await submitAs(keyB, 'approve_activity', { fingerprint })).status).toBe(403)
    expect((await submitAs(keyB, 'latchkey_satisfy_mfa', { fingerprint, totpCode: '123456' })).status).toBe(
      403,
    )
    const proven = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint,
      totpCode: totp(secret, h.clock.now()),
    })
    expect(proven.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(proven.body.activity.result.latchkeyCreateRecoveryCodesResult.recoveryCodes).toHaveLength(10)
    // The record keeps none, for B or for A.
    for (const key of [keyA, keyB]) {
      const seen = await queryAs(key, 'get_activity', { activityId: held.body.activity.id })
      expect(seen.body.activity.result.latchkeyCreateRecoveryCodesResult.recoveryCodes).toEqual([])
    }
  })
})

describe("what an activity shows only once, when another user's vote runs it", () => {
  // A handler that waits for the root quorum and shows something once (here recovery codes that
  // waited, as they once did; any plugin's could).
  const waiting = { latchkey_create_recovery_codes: { ...createRecoveryCodes, skipConsensus: false } }

  it("the voter's answer has it emptied; the submitter whose own proof ran it is answered it", async () => {
    await setUp({ activities: waiting as unknown as ActivityHandlers })
    const vote = await approvedByB('latchkey_create_recovery_codes', { userId: userA })
    expect(vote.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(vote.body.activity.result.latchkeyCreateRecoveryCodesResult.recoveryCodes).toEqual([])
    // Control: consensus, then A's own policy holds it; A's code runs it and A is answered the codes.
    const secret = await enrolA()
    await walletPolicyOnA()
    const submitted = await submitAs(keyA, 'latchkey_create_recovery_codes', { userId: userA })
    expect(submitted.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const fingerprint = submitted.body.activity.fingerprint
    const heldByA = await submitAs(keyB, 'approve_activity', { fingerprint })
    expect(heldByA.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const proven = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint,
      totpCode: totp(secret, h.clock.now()),
    })
    expect(proven.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(proven.body.activity.result.latchkeyCreateRecoveryCodesResult.recoveryCodes).toHaveLength(10)
  })
})
