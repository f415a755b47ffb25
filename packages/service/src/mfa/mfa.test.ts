import { ACTIVITIES, type ActivityPath } from '@latchkey/protocol'
import { base32nopad } from '@scure/base'
import { beforeEach, describe, expect, it } from 'vitest'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Json,
  resultOf,
  softPasskey,
  type TestKey,
  testKey,
} from '../testing/harness.ts'
import { AUTHORITY_CHANGES, DESTRUCTIVE_CHANGES } from './mfaGate.ts'
import { totp } from './totp.ts'

/**
 * The MFA wing by attack: policies in the published shape, activities held in
 * ACTIVITY_STATUS_AUTHENTICATORS_NEEDED until their steps are proven by the same user, then run
 * once; TOTP codes accepted once; recovery codes spent once; attempts bounded.
 */

let h: Harness
let org: string
let userA: string
let userB: string
let keyA: TestKey
let keyB: TestKey

beforeEach(async () => {
  h = await createHarness()
  keyA = testKey()
  keyB = testKey()
  const sub = await h.createSubOrganization({ keys: [keyA, keyB] })
  org = sub.organizationId
  ;[userA, userB] = sub.userIds as [string, string]
})

const submitAs = (key: TestKey, path: Parameters<Harness['submit']>[0], params: unknown) => {
  h.clock.advance(1)
  return h.submit(path, params, { as: key, organizationId: org })
}
const queryAs = (key: TestKey, path: string, body: Record<string, unknown>) =>
  h.query(path, { organizationId: org, ...body }, { as: key, organizationId: org })

/** Enrols and confirms a TOTP factor of the key's user; returns its id and secret. */
async function enrolTotp(key: TestKey, userId: string) {
  const enrolled = resultOf(
    'latchkey_create_totp_factor',
    await submitAs(key, 'latchkey_create_totp_factor', { userId }),
  )
  const secret = base32nopad.decode(enrolled.secret)
  const confirm = await submitAs(key, 'latchkey_confirm_totp_factor', {
    userId,
    factorId: enrolled.factorId,
    code: totp(secret, h.clock.now()),
  })
  resultOf('latchkey_confirm_totp_factor', confirm)
  // The next code is a new step: the confirmation's cannot be used again.
  h.clock.advance(30_000)
  return { factorId: enrolled.factorId as string, secret, enrolled }
}

const codeOf = (reply: { body: { errorCode?: string; details?: { errorCode?: string } } }) =>
  reply.body.errorCode ?? reply.body.details?.errorCode

const TOTP_STEP = [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }]
const WALLETS = "activity.resource == 'WALLET' && activity.action == 'CREATE'"

async function policyOn(key: TestKey, userId: string, steps: unknown = TOTP_STEP, condition = WALLETS) {
  return resultOf(
    'create_mfa_policy',
    await submitAs(key, 'create_mfa_policy', {
      userId,
      mfaPolicyName: 'wallets need a code',
      condition,
      requiredAuthenticationMethods: steps,
      order: 0,
    }),
  ).mfaPolicyId as string
}

const newWallet = (key: TestKey, name = 'w') =>
  submitAs(key, 'create_wallet', { walletName: name, accounts: [ETHEREUM_ACCOUNT] })

async function walletCount(key: TestKey) {
  const reply = await queryAs(key, 'list_wallets', {})
  return (reply.body.wallets as unknown[]).length
}

describe('MFA policies', () => {
  it('are created, listed, read, updated and deleted in the published shape', async () => {
    await enrolTotp(keyB, userB)
    const id = await policyOn(keyA, userB)
    const listed = await queryAs(keyA, 'get_mfa_policies', { userId: userB })
    expect(listed.status).toBe(200)
    expect(listed.body.mfaPolicies).toEqual([
      expect.objectContaining({
        mfaPolicyId: id,
        mfaPolicyName: 'wallets need a code',
        condition: WALLETS,
        requiredAuthenticationMethods: TOTP_STEP,
        order: 0,
        createdAt: expect.objectContaining({ seconds: expect.any(String) }),
      }),
    ])
    resultOf(
      'update_mfa_policy',
      await submitAs(keyA, 'update_mfa_policy', { userId: userB, mfaPolicyId: id, order: 3 }),
    )
    expect(
      (await queryAs(keyA, 'get_mfa_policy', { userId: userB, mfaPolicyId: id })).body.mfaPolicy.order,
    ).toBe(3)
    resultOf(
      'delete_mfa_policy',
      await submitAs(keyA, 'delete_mfa_policy', { userId: userB, mfaPolicyId: id }),
    )
    expect((await queryAs(keyA, 'get_mfa_policies', { userId: userB })).body.mfaPolicies).toEqual([])
  })

  it('refuses bad input with a 4xx naming the field', async () => {
    const base = {
      userId: userA,
      mfaPolicyName: 'p',
      condition: WALLETS,
      requiredAuthenticationMethods: TOTP_STEP,
      order: 0,
    }
    const cases: [Record<string, unknown>, number, string][] = [
      [{ condition: "activity.type == 'X' &&" }, 400, 'parameters.condition'],
      [{ condition: '' }, 400, 'parameters.condition'],
      [{ requiredAuthenticationMethods: [] }, 400, 'parameters.requiredAuthenticationMethods'],
      [
        { requiredAuthenticationMethods: [{ any: [] }] },
        400,
        'parameters.requiredAuthenticationMethods[0].any',
      ],
      [
        { requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_NOPE' }] }] },
        400,
        'parameters.requiredAuthenticationMethods[0].any[0].type',
      ],
      [
        { requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_OAUTH' }] }] },
        400,
        'parameters.requiredAuthenticationMethods[0].any[0].type',
      ],
      [{ order: -1 }, 400, 'parameters.order'],
      [{ userId: 'no-such-user' }, 404, 'parameters.userId'],
    ]
    for (const [change, status, field] of cases) {
      const reply = await submitAs(keyA, 'create_mfa_policy', { ...base, ...change })
      expect([reply.status, reply.body.details?.field ?? reply.body], JSON.stringify(change)).toEqual([
        status,
        field,
      ])
    }
  })

  it('a user holds at most 20', async () => {
    await enrolTotp(keyB, userB)
    for (let i = 0; i < 20; i++) await policyOn(keyA, userB, TOTP_STEP, `activity.type == 'T${i}'`)
    const reply = await submitAs(keyA, 'create_mfa_policy', {
      userId: userB,
      mfaPolicyName: 'one more',
      condition: WALLETS,
      requiredAuthenticationMethods: TOTP_STEP,
      order: 0,
    })
    expect([reply.status, reply.body.details?.field]).toEqual([400, 'parameters.userId'])
  })
  it('a step only a TOTP factor proves is refused on a user without a confirmed one: it would lock them out', async () => {
    const unconfirmed = resultOf(
      'latchkey_create_totp_factor',
      await submitAs(keyB, 'latchkey_create_totp_factor', { userId: userB }),
    )
    const steps = [{ any: [{ type: 'AUTHENTICATION_TYPE_API_KEY' }] }, ...TOTP_STEP]
    const refused = await submitAs(keyA, 'create_mfa_policy', {
      userId: userB,
      mfaPolicyName: 'p',
      condition: WALLETS,
      requiredAuthenticationMethods: steps,
      order: 0,
    })
    expect([refused.status, refused.body.details?.field]).toEqual([
      400,
      'parameters.requiredAuthenticationMethods[1].any',
    ])
    // Naming the unconfirmed factor does not help; a step a passkey may also prove is fine.
    const named = await submitAs(keyA, 'create_mfa_policy', {
      userId: userB,
      mfaPolicyName: 'p',
      condition: WALLETS,
      requiredAuthenticationMethods: [
        { any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP', id: unconfirmed.factorId }] },
      ],
      order: 0,
    })
    expect(named.status).toBe(400)
    // A step a passkey may also prove is fine once the user holds a passkey (none yet: refused).
    const either = [
      { any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }, { type: 'AUTHENTICATION_TYPE_PASSKEY' }] },
    ]
    const noPasskey = await submitAs(keyA, 'create_mfa_policy', {
      userId: userB,
      mfaPolicyName: 'p',
      condition: WALLETS,
      requiredAuthenticationMethods: either,
      order: 0,
    })
    expect([noPasskey.status, noPasskey.body.details?.field]).toEqual([
      400,
      'parameters.requiredAuthenticationMethods[0].any',
    ])
    resultOf(
      'create_authenticators',
      await submitAs(keyB, 'create_authenticators', {
        userId: userB,
        authenticators: [softPasskey().register()],
      }),
    )
    await policyOn(keyA, userB, either)
  })

  it('a passkey or an API key the user does not hold is refused too (it would lock them out), by create_mfa_policy and update_mfa_policy', async () => {
    const base = { userId: userA, mfaPolicyName: 'p', order: 0, condition: 'true' }
    const unprovable = [
      [{ any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY', id: 'no-such-passkey' }] }],
      [{ any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY' }] }],
      [{ any: [{ type: 'AUTHENTICATION_TYPE_API_KEY', id: 'no-such-key' }] }],
      [
        { any: [{ type: 'AUTHENTICATION_TYPE_SESSION' }] },
        { any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY' }] },
      ],
    ]
    for (const steps of unprovable) {
      const reply = await submitAs(keyA, 'create_mfa_policy', {
        ...base,
        requiredAuthenticationMethods: steps,
      })
      expect([reply.status, reply.body.details?.field], JSON.stringify(steps)).toEqual([
        400,
        `parameters.requiredAuthenticationMethods[${steps.length - 1}].any`,
      ])
    }
    expect(await h.service.store.findBy('mfaPolicies', 'organizationId', org)).toEqual([])
    // A key the user holds is fine, and nothing is locked out.
    const keyId = (await h.service.store.findBy('apiKeys', 'userId', userA))[0]!.id
    const { mfaPolicyId } = resultOf(
      'create_mfa_policy',
      await submitAs(keyA, 'create_mfa_policy', {
        ...base,
        condition: WALLETS,
        requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_API_KEY', id: keyId }] }],
      }),
    )
    // Changed by another root user (nothing holds B) to a passkey A does not hold: refused too.
    const update = await submitAs(keyB, 'update_mfa_policy', {
      userId: userA,
      mfaPolicyId,
      requiredAuthenticationMethods: [
        { any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY', id: 'no-such-passkey' }] },
      ],
    })
    expect([update.status, update.body.details?.field]).toEqual([
      400,
      'parameters.requiredAuthenticationMethods[0].any',
    ])
    expect((await newWallet(keyA)).body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
  })
  it('each step needs a proof of its own: a policy met only by proving twice with one session, key or factor is refused', async () => {
    const base = { userId: userA, mfaPolicyName: 'p', order: 0, condition: 'true' }
    const create = (steps: unknown) =>
      submitAs(keyA, 'create_mfa_policy', { ...base, requiredAuthenticationMethods: steps })
    const keyId = (await h.service.store.findBy('apiKeys', 'userId', userA))[0]!.id
    const { factorId } = await enrolTotp(keyA, userA)
    const method = (type: string, id?: string) => ({
      type: `AUTHENTICATION_TYPE_${type}`,
      ...(id ? { id } : {}),
    })
    const never = [
      // Every session proves the same method: a policy counts it once.
      [[method('SESSION')], [method('SESSION')]],
      [[method('API_KEY', keyId)], [method('API_KEY', keyId)]],
      [[method('LATCHKEY_TOTP', factorId)], [method('LATCHKEY_TOTP', factorId)]],
      // One factor: its code proves one step.
      [[method('LATCHKEY_TOTP')], [method('SESSION')], [method('LATCHKEY_TOTP')]],
      // The key the activity is sent with proves the first step at once, and so does a session:
      // whichever the user sends with, the step needing it again is left with nothing.
      [
        [method('SESSION'), method('API_KEY', keyId), method('LATCHKEY_TOTP')],
        [method('SESSION')],
        [method('API_KEY', keyId)],
      ],
    ]
    // A key that has expired proves nothing any more.
    const [expiredId] = resultOf(
      'create_api_keys',
      await submitAs(keyA, 'create_api_keys', {
        userId: userA,
        apiKeys: [{ ...testKey().apiKey('an hour'), expirationSeconds: '3600' }],
      }),
    ).apiKeyIds
    h.clock.advance(3_600_000)
    never.push([[method('API_KEY', expiredId)]])
    for (const steps of never) {
      const reply = await create(steps.map((any) => ({ any })))
      expect([reply.status, reply.body.details?.field], JSON.stringify(steps)).toEqual([
        400,
        `parameters.requiredAuthenticationMethods[${steps.length - 1}].any`,
      ])
    }
    expect(await h.service.store.findBy('mfaPolicies', 'organizationId', org)).toEqual([])
    // Different proofs for each step, in some order the user can give them, are fine.
    for (const steps of [
      [[method('SESSION')], [method('API_KEY', keyId)]],
      [[method('LATCHKEY_TOTP'), method('SESSION')], [method('SESSION')]],
    ]) {
      const reply = await create(steps.map((any) => ({ any })))
      expect(reply.body.activity?.status, JSON.stringify(steps)).toBe('ACTIVITY_STATUS_COMPLETED')
      const { mfaPolicyId } = reply.body.activity.result.createMfaPolicyResult
      // Another root user (under no policy) takes it away for the next case.
      const removal = await submitAs(keyB, 'delete_mfa_policy', { userId: userA, mfaPolicyId })
      expect(removal.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    }
    // Recovery codes each prove a TOTP step: the same factor twice is met with one of them.
    resultOf(
      'latchkey_create_recovery_codes',
      await submitAs(keyA, 'latchkey_create_recovery_codes', { userId: userA }),
    )
    await policyOn(keyA, userA, [
      { any: [method('LATCHKEY_TOTP', factorId)] },
      { any: [method('LATCHKEY_TOTP', factorId)] },
    ])
  })
})

describe("a stolen session (only the victim's session key) with a policy in force", () => {
  it('cannot enrol a first factor, mint recovery codes, or add a passkey or an API key of its own', async () => {
    const passkey = softPasskey()
    const [authenticatorId] = resultOf(
      'create_authenticators',
      await submitAs(keyA, 'create_authenticators', { userId: userA, authenticators: [passkey.register()] }),
    ).authenticatorIds
    await policyOn(keyA, userA, [{ any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY', id: authenticatorId }] }])
    const attacker = testKey()
    const attempts = [
      ['latchkey_create_totp_factor', { userId: userA }],
      ['latchkey_create_recovery_codes', { userId: userA }],
      ['create_authenticators', { userId: userA, authenticators: [softPasskey().register()] }],
      ['create_api_keys', { userId: userA, apiKeys: [attacker.apiKey('mine')] }],
    ] as const
    for (const [path, params] of attempts) {
      const reply = await submitAs(keyA, path, params)
      expect([path, reply.body.activity?.status]).toEqual([path, 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'])
      // Nothing of it shows: no secret, no codes.
      expect(reply.body.activity.result).toEqual({})
    }
    expect((await queryAs(keyA, 'latchkey_get_mfa_factors', { userId: userA })).body).toMatchObject({
      factors: [],
      recoveryCodesRemaining: 0,
    })
    // The attacker's key was not added: it cannot act.
    expect(
      (await h.query('list_wallets', { organizationId: org }, { as: attacker, organizationId: org })).status,
    ).toBe(401)
    // The user's own passkey lets the enrolment through, answering its secret to that satisfaction.
    const enrolment = await submitAs(keyA, 'latchkey_create_totp_factor', { userId: userA })
    h.clock.advance(1)
    const approved = await h.submit(
      'approve_activity',
      { fingerprint: enrolment.body.activity.fingerprint },
      { as: passkey, organizationId: org },
    )
    expect(approved.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(approved.body.activity.result.latchkeyCreateTotpFactorResult.secret).toMatch(/^[A-Z2-7]{32}$/)
  })

  it('the last factor a TOTP-only policy needs cannot be removed: refused when submitted, before a code is spent', async () => {
    const { factorId } = await enrolTotp(keyA, userA)
    await policyOn(keyA, userA)
    const removal = await submitAs(keyA, 'latchkey_delete_totp_factor', { userId: userA, factorId })
    expect([removal.status, removal.body.details?.field]).toEqual([400, 'parameters.factorId'])
    expect(removal.body.message).toContain('last way to prove MFA policy')
    // Nothing waits for a code.
    const held = (await h.service.store.findBy('activities', 'organizationId', org)).filter(
      (row) => row.path === 'latchkey_delete_totp_factor',
    )
    expect(held).toEqual([])
    expect((await queryAs(keyA, 'latchkey_get_mfa_factors', { userId: userA })).body.factors).toHaveLength(1)
  })
  it('the last factor of a step a deleted passkey also named cannot be removed: the step would be left with nothing', async () => {
    const { factorId, secret } = await enrolTotp(keyA, userA)
    const [authenticatorId] = resultOf(
      'create_authenticators',
      await submitAs(keyA, 'create_authenticators', {
        userId: userA,
        authenticators: [softPasskey().register()],
      }),
    ).authenticatorIds
    await policyOn(keyA, userA, [
      {
        any: [
          { type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' },
          { type: 'AUTHENTICATION_TYPE_PASSKEY', id: authenticatorId },
        ],
      },
    ])
    const withCode = async (path: 'delete_authenticators', params: Json) => {
      const held = await submitAs(keyA, path, params)
      expect(held.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
      h.clock.advance(30_000)
      return submitAs(keyA, 'latchkey_satisfy_mfa', {
        fingerprint: held.body.activity.fingerprint,
        totpCode: totp(secret, h.clock.now()),
      })
    }
    // The factor's removal waits for its code (the passkey would still prove the step)…
    const factorRemoval = await submitAs(keyA, 'latchkey_delete_totp_factor', { userId: userA, factorId })
    expect(factorRemoval.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    // …meanwhile the passkey goes: the factor still proves the step.
    const passkeyGone = await withCode('delete_authenticators', {
      userId: userA,
      authenticatorIds: [authenticatorId],
    })
    expect(passkeyGone.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    // The factor is now the step's only proof: the held removal, even with its own code, fails…
    h.clock.advance(30_000)
    const factorGone = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: factorRemoval.body.activity.fingerprint,
      totpCode: totp(secret, h.clock.now()),
    })
    expect(factorGone.body.activity.status).toBe('ACTIVITY_STATUS_FAILED')
    expect(factorGone.body.activity.failure.message).toContain('parameters.factorId')
    // …and a new one is refused at once.
    const again = await submitAs(keyA, 'latchkey_delete_totp_factor', { userId: userA, factorId })
    expect([again.status, again.body.details?.field]).toEqual([400, 'parameters.factorId'])
    expect((await queryAs(keyA, 'latchkey_get_mfa_factors', { userId: userA })).body.factors).toHaveLength(1)
  })
})

describe('an activity a policy matches', () => {
  it('waits, then completes once after the right TOTP code; wrong and replayed codes are refused', async () => {
    const { secret } = await enrolTotp(keyA, userA)
    await policyOn(keyA, userA)
    const held = await newWallet(keyA)
    expect(held.status).toBe(200)
    expect(held.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    expect(held.body.activity.result).toEqual({})
    expect(await walletCount(keyA)).toBe(0)
    const fingerprint = held.body.activity.fingerprint
    // Activities the condition does not match run at once.
    resultOf('update_user_name', await submitAs(keyA, 'update_user_name', { userId: userA, userName: 'Ada' }))

    const status = await queryAs(keyA, 'get_mfa_status', { activityId: held.body.activity.id })
    expect(status.body.mfaStatuses).toEqual([
      expect.objectContaining({
        userId: userA,
        satisfied: false,
        satisfiedMethods: [],
        requiredMethods: TOTP_STEP,
      }),
    ])

    const code = totp(secret, h.clock.now())
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0')
    const refused = await submitAs(keyA, 'latchkey_satisfy_mfa', { fingerprint, totpCode: wrong })
    expect([refused.status, refused.body.errorCode ?? refused.body.details?.errorCode]).toEqual([
      400,
      'OTP_INVALID',
    ])
    expect(await walletCount(keyA)).toBe(0)

    const done = await submitAs(keyA, 'latchkey_satisfy_mfa', { fingerprint, totpCode: code })
    expect(done.status, JSON.stringify(done.body)).toBe(200)
    expect(done.body.activity.id).toBe(held.body.activity.id)
    expect(done.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await walletCount(keyA)).toBe(1)
    // The same request again (a client's retry) is a replay: it answers as the first did, with the
    // activity it let run, not the satisfaction's own record; nothing runs twice.
    const retried = await h.submit(
      'latchkey_satisfy_mfa',
      { fingerprint, totpCode: code },
      { as: keyA, organizationId: org },
    )
    expect(retried.status).toBe(200)
    expect(retried.body.activity).toMatchObject({
      id: held.body.activity.id,
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      status: 'ACTIVITY_STATUS_COMPLETED',
      result: done.body.activity.result,
    })
    expect(await walletCount(keyA)).toBe(1)

    // Once done, nothing runs it again: another satisfaction is refused.
    const again = await submitAs(keyA, 'latchkey_satisfy_mfa', { fingerprint, totpCode: code })
    expect(codeOf(again)).toBe('ACTIVITY_NOT_VOTABLE')
    // The same code on another held activity is a replay.
    const second = await newWallet(keyA, 'w2')
    const replayed = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: second.body.activity.fingerprint,
      totpCode: code,
    })
    expect(codeOf(replayed)).toBe('OTP_INVALID')
    expect(await walletCount(keyA)).toBe(1)
    // The codes never stay in the activity's record.
    const record = await queryAs(keyA, 'get_activity', { activityId: done.body.activity.id })
    expect(JSON.stringify(record.body)).not.toContain(code)
  })

  it("another user's session and another user's code cannot satisfy it", async () => {
    await enrolTotp(keyA, userA)
    const b = await enrolTotp(keyB, userB)
    await policyOn(keyA, userA)
    const held = await newWallet(keyA)
    const fingerprint = held.body.activity.fingerprint
    const byB = await submitAs(keyB, 'latchkey_satisfy_mfa', {
      fingerprint,
      totpCode: totp(b.secret, h.clock.now()),
    })
    expect(byB.status).toBe(403)
    const approveByB = await submitAs(keyB, 'approve_activity', { fingerprint })
    expect(approveByB.status).toBe(403)
    const codeOfB = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint,
      totpCode: totp(b.secret, h.clock.now()),
    })
    expect(codeOf(codeOfB)).toBe('OTP_INVALID')
    expect(await walletCount(keyA)).toBe(0)
    const still = await queryAs(keyA, 'get_activity', { activityId: held.body.activity.id })
    expect(still.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    expect(still.body.activity.canApprove).toBe(true)
    expect(
      (await queryAs(keyB, 'get_activity', { activityId: held.body.activity.id })).body.activity.canApprove,
    ).toBe(false)
    // A withdraws it, and nothing can run it any more.
    const withdrawn = await submitAs(keyA, 'reject_activity', { fingerprint })
    expect(withdrawn.body.activity.status).toBe('ACTIVITY_STATUS_REJECTED')
    expect(codeOf(await submitAs(keyA, 'approve_activity', { fingerprint }))).toBe('ACTIVITY_NOT_VOTABLE')
    expect(await walletCount(keyA)).toBe(0)
  })

  it("a root user may reject another user's held activity, never approve it; a user outside the root quorum may do neither", async () => {
    await enrolTotp(keyA, userA)
    await policyOn(keyA, userA)
    // C: a user of the organization who is not in its root quorum.
    const keyC = testKey()
    const [userC] = resultOf('create_users', await submitAs(keyB, 'create_users', newUser(keyC, 'c'))).userIds
    const { policyId } = resultOf(
      'create_policy',
      await submitAs(keyB, 'create_policy', {
        policyName: 'c votes',
        effect: 'EFFECT_ALLOW',
        consensus: `approvers.any(user, user.id == '${userC}')`,
        condition:
          "activity.type == 'ACTIVITY_TYPE_REJECT_ACTIVITY' || activity.type == 'ACTIVITY_TYPE_APPROVE_ACTIVITY'",
      }),
    )
    expect(policyId).toBeTruthy()
    const held = await newWallet(keyA)
    const fingerprint = held.body.activity.fingerprint
    const seenBy = async (key: TestKey) =>
      (await queryAs(key, 'get_activity', { activityId: held.body.activity.id })).body.activity
    expect(await seenBy(keyB)).toMatchObject({ canApprove: false, canReject: true })
    expect(await seenBy(keyC)).toMatchObject({ canApprove: false, canReject: false })
    expect(codeOf(await submitAs(keyC, 'reject_activity', { fingerprint }))).toBe('ACTIVITY_NOT_VOTABLE')
    expect((await submitAs(keyB, 'approve_activity', { fingerprint })).status).toBe(403)
    expect((await seenBy(keyA)).status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const rejected = await submitAs(keyB, 'reject_activity', { fingerprint })
    expect(rejected.body.activity.status).toBe('ACTIVITY_STATUS_REJECTED')
    expect(codeOf(await submitAs(keyA, 'approve_activity', { fingerprint }))).toBe('ACTIVITY_NOT_VOTABLE')
    expect(await walletCount(keyA)).toBe(0)
  })

  it('is satisfied the published way, approve_activity stamped by the named key, and runs once under 8 concurrent approvals', async () => {
    const second = await namedKeyPolicyOnA()
    const held = await newWallet(keyA)
    expect(held.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const fingerprint = held.body.activity.fingerprint
    // The submitting key proves nothing more.
    expect((await submitAs(keyA, 'approve_activity', { fingerprint })).status).toBe(403)
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        h.submit(
          'approve_activity',
          { fingerprint },
          {
            as: second,
            organizationId: org,
            timestampMs: String(h.clock.now() + i),
          },
        ),
      ),
    )
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1)
    expect(replies.filter((reply) => reply.status !== 200).map(codeOf)).toEqual(
      Array(7).fill('ACTIVITY_NOT_VOTABLE'),
    )
    expect(await walletCount(keyA)).toBe(1)
  })

  it("ordered steps: the submitting key proves the first, the same user's passkey the second (another passkey is refused)", async () => {
    const passkey = softPasskey()
    const [authenticatorId] = resultOf(
      'create_authenticators',
      await submitAs(keyA, 'create_authenticators', { userId: userA, authenticators: [passkey.register()] }),
    ).authenticatorIds
    const other = softPasskey()
    resultOf(
      'create_authenticators',
      await submitAs(keyB, 'create_authenticators', { userId: userB, authenticators: [other.register()] }),
    )
    await policyOn(keyA, userA, [
      { any: [{ type: 'AUTHENTICATION_TYPE_API_KEY' }] },
      { any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY', id: authenticatorId }] },
    ])
    const held = await newWallet(keyA)
    expect(held.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const status = await queryAs(keyA, 'get_mfa_status', { activityId: held.body.activity.id })
    expect(status.body.mfaStatuses[0].satisfiedMethods).toEqual([
      { type: 'AUTHENTICATION_TYPE_API_KEY', id: expect.any(String) },
    ])
    const fingerprint = held.body.activity.fingerprint
    h.clock.advance(1)
    const byOther = await h.submit('approve_activity', { fingerprint }, { as: other, organizationId: org })
    expect(byOther.status).toBe(403)
    h.clock.advance(1)
    const approved = await h.submit('approve_activity', { fingerprint }, { as: passkey, organizationId: org })
    expect(approved.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await walletCount(keyA)).toBe(1)
  })

  it('an MFA policy on a user is removed by that user only by satisfying it', async () => {
    const { secret } = await enrolTotp(keyA, userA)
    const id = await policyOn(keyA, userA)
    const removal = await submitAs(keyA, 'delete_mfa_policy', { userId: userA, mfaPolicyId: id })
    expect(removal.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const weakened = await submitAs(keyA, 'update_mfa_policy', {
      userId: userA,
      mfaPolicyId: id,
      condition: 'false',
    })
    expect(weakened.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    // Nor by replacing the factor or minting recovery codes without it.
    for (const [path, params] of [
      ['latchkey_create_totp_factor', { userId: userA }],
      ['latchkey_create_recovery_codes', { userId: userA }],
    ] as const) {
      const reply = await submitAs(keyA, path, params)
      expect(reply.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
      expect(reply.body.activity.result).toEqual({})
    }
    expect((await queryAs(keyA, 'get_mfa_policies', { userId: userA })).body.mfaPolicies).toHaveLength(1)
    // Satisfied, the held minting answers its codes once, to the satisfaction, and stores none.
    const minting = await submitAs(keyA, 'latchkey_create_recovery_codes', { userId: userA })
    const minted = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: minting.body.activity.fingerprint,
      totpCode: totp(secret, h.clock.now()),
    })
    expect(minted.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    const codes = minted.body.activity.result.latchkeyCreateRecoveryCodesResult.recoveryCodes
    expect(codes).toHaveLength(10)
    const stored = await queryAs(keyA, 'get_activity', { activityId: minting.body.activity.id })
    expect(stored.body.activity.result.latchkeyCreateRecoveryCodesResult.recoveryCodes).toEqual([])
    h.clock.advance(30_000)
    const done = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: removal.body.activity.fingerprint,
      totpCode: totp(secret, h.clock.now()),
    })
    expect(done.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect((await queryAs(keyA, 'get_mfa_policies', { userId: userA })).body.mfaPolicies).toEqual([])
  })
})

describe('TOTP factors', () => {
  it('the secret is answered once and sealed at rest; a confirmation code is accepted once', async () => {
    const enrolled = resultOf(
      'latchkey_create_totp_factor',
      await submitAs(keyA, 'latchkey_create_totp_factor', { userId: userA }),
    )
    expect(enrolled.otpauthUri).toMatch(/^otpauth:\/\/totp\/Latchkey:/)
    expect(enrolled.otpauthUri).toContain(`secret=${enrolled.secret}`)
    const stored = await h.service.store.get('mfaFactors', enrolled.factorId)
    expect(JSON.stringify(stored)).not.toContain(enrolled.secret)
    const activities = await h.service.store.findBy('activities', 'organizationId', org)
    expect(JSON.stringify(activities)).not.toContain(enrolled.secret)
    const secret = base32nopad.decode(enrolled.secret)
    const code = totp(secret, h.clock.now())
    const factorId = enrolled.factorId
    resultOf(
      'latchkey_confirm_totp_factor',
      await submitAs(keyA, 'latchkey_confirm_totp_factor', { userId: userA, factorId, code }),
    )
    const replay = await submitAs(keyA, 'latchkey_confirm_totp_factor', { userId: userA, factorId, code })
    expect(codeOf(replay)).toBe('OTP_INVALID')
    // Another user's factors are not theirs to touch.
    const foreign = await submitAs(keyB, 'latchkey_delete_totp_factor', { userId: userA, factorId })
    expect([foreign.status, foreign.body.details?.field]).toEqual([403, 'parameters.userId'])
    const factors = await queryAs(keyA, 'latchkey_get_mfa_factors', { userId: userA })
    expect(factors.body).toEqual({
      factors: [
        expect.objectContaining({ factorId, confirmed: true, type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }),
      ],
      recoveryCodesRemaining: 0,
    })
  })

  it('code attempts are bounded per user: the sixth in five minutes is refused, even a right one', async () => {
    const { secret } = await enrolTotp(keyA, userA)
    await policyOn(keyA, userA)
    const held = await newWallet(keyA)
    const fingerprint = held.body.activity.fingerprint
    // The confirmation spent one attempt; four wrong guesses spend the rest.
    for (let i = 0; i < 4; i++) {
      const reply = await submitAs(keyA, 'latchkey_satisfy_mfa', { fingerprint, totpCode: '000000' })
      expect(codeOf(reply)).toBe('OTP_INVALID')
    }
    const blocked = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint,
      totpCode: totp(secret, h.clock.now()),
    })
    expect([blocked.status, blocked.body.details?.errorCode ?? blocked.body.errorCode]).toEqual([
      429,
      'OTP_ATTEMPTS_EXCEEDED',
    ])
    expect(await walletCount(keyA)).toBe(0)
    h.clock.advance(60_000)
    const later = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint,
      totpCode: totp(secret, h.clock.now()),
    })
    expect(later.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
  })
})

describe('recovery codes', () => {
  it('ten, shown once, stored as keyed hashes; each works once, and one used twice at once wins once', async () => {
    await enrolTotp(keyA, userA)
    const { recoveryCodes } = resultOf(
      'latchkey_create_recovery_codes',
      await submitAs(keyA, 'latchkey_create_recovery_codes', { userId: userA }),
    )
    expect(recoveryCodes).toHaveLength(10)
    expect(new Set(recoveryCodes).size).toBe(10)
    const rows = await h.service.store.findBy('mfaRecoveryCodes', 'userId', userA)
    expect(rows).toHaveLength(10)
    const everything = JSON.stringify([
      rows,
      await h.service.store.findBy('activities', 'organizationId', org),
    ])
    for (const code of recoveryCodes) expect(everything).not.toContain(code)

    await policyOn(keyA, userA)
    const first = await newWallet(keyA, 'one')
    const used = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: first.body.activity.fingerprint,
      recoveryCode: recoveryCodes[0].toLowerCase(),
    })
    expect(used.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    const second = await newWallet(keyA, 'two')
    const reused = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: second.body.activity.fingerprint,
      recoveryCode: recoveryCodes[0],
    })
    expect(codeOf(reused)).toBe('OTP_INVALID')

    // One code on two held activities at once: one wins.
    const third = await newWallet(keyA, 'three')
    const racing = await Promise.all(
      [second, third].map((held, i) =>
        h.submit(
          'latchkey_satisfy_mfa',
          { fingerprint: held.body.activity.fingerprint, recoveryCode: recoveryCodes[1] },
          { as: keyA, organizationId: org, timestampMs: String(h.clock.now() + i) },
        ),
      ),
    )
    expect(racing.map((reply) => reply.status).sort()).toEqual([200, 400])
    expect(await walletCount(keyA)).toBe(2)
    expect(
      (await queryAs(keyA, 'latchkey_get_mfa_factors', { userId: userA })).body.recoveryCodesRemaining,
    ).toBe(8)
  })
})

// What a stolen credential of a user under an MFA policy must not get around (review): giving
// authority to someone else (a user it holds the key of, a root seat, a policy), running an
// activity parked before its submitter lost the right to it, and a policy its user cannot prove.

/** A confirmed TOTP factor and a wallet-creation policy on the key's user; a code maker for later. */
async function totpPolicyOn(key: TestKey, userId: string) {
  const { secret } = await enrolTotp(key, userId)
  const mfaPolicyId = await policyOn(key, userId)
  return {
    mfaPolicyId,
    /** A code of a step no earlier code used. */
    code: () => {
      h.clock.advance(30_000)
      return totp(secret, h.clock.now())
    },
  }
}

const status = (reply: { body: { activity?: { status?: string } } }) => reply.body.activity?.status
const newUser = (attacker: TestKey, name = 'helper') => ({
  users: [
    {
      userName: name,
      apiKeys: [attacker.apiKey(name)],
      authenticators: [],
      oauthProviders: [],
      userTags: [],
    },
  ],
})
const wallet = (name: string) => ({ walletName: name, accounts: [ETHEREUM_ACCOUNT] })

/** A second API key of A's, and a policy on A's new wallets that only that key proves. */
async function namedKeyPolicyOnA() {
  const second = testKey()
  const [keyId] = resultOf(
    'create_api_keys',
    await submitAs(keyA, 'create_api_keys', { userId: userA, apiKeys: [second.apiKey('second')] }),
  ).apiKeyIds
  await policyOn(keyA, userA, [{ any: [{ type: 'AUTHENTICATION_TYPE_API_KEY', id: keyId }] }])
  return second
}

/** Both root users must approve every activity from now on (B, who has no policy, sets it). */
const twoOfTwo = async () =>
  resultOf(
    'update_root_quorum',
    await submitAs(keyB, 'update_root_quorum', { threshold: 2, userIds: [userA, userB] }),
  )

describe('a factor made before the policies', () => {
  it("is not confirmed once a policy is on the user: a thief's planted enrolment never proves a step; one made under the policy confirms", async () => {
    // Before any policy, whoever holds the session starts an enrolment and keeps its secret.
    const planted = resultOf(
      'latchkey_create_totp_factor',
      await submitAs(keyA, 'latchkey_create_totp_factor', { userId: userA, factorName: 'planted' }),
    )
    const plantedSecret = base32nopad.decode(planted.secret)
    // The user enrols their own factor and turns MFA on for new wallets.
    const { code } = await totpPolicyOn(keyA, userA)
    const confirm = await submitAs(keyA, 'latchkey_confirm_totp_factor', {
      userId: userA,
      factorId: planted.factorId,
      code: totp(plantedSecret, h.clock.now()),
    })
    expect(confirm.status).toBe(400)
    expect(confirm.body.details?.field).toBe('parameters.factorId')
    // So the planted secret's codes prove nothing.
    const held = await newWallet(keyA)
    expect(status(held)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    h.clock.advance(30_000)
    const forged = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: totp(plantedSecret, h.clock.now()),
    })
    expect(codeOf(forged)).toBe('OTP_INVALID')
    expect(await walletCount(keyA)).toBe(0)
    // A factor enrolled under the policy (the enrolment held, proven with the user's code) confirms.
    const enrolment = await submitAs(keyA, 'latchkey_create_totp_factor', {
      userId: userA,
      factorName: 'second',
    })
    expect(status(enrolment)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const enrolled = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: enrolment.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(status(enrolled)).toBe('ACTIVITY_STATUS_COMPLETED')
    const second = (await h.service.store.findBy('mfaFactors', 'userId', userA)).find(
      (f) => f.name === 'second',
    )!
    expect(second.confirmed).toBe(false)
    h.clock.advance(30_000)
    expect(
      status(
        await submitAs(keyA, 'latchkey_confirm_totp_factor', {
          userId: userA,
          factorId: second.id,
          code: totp(h.service.runtime.open(second.sealedSecret), h.clock.now()),
        }),
      ),
    ).toBe('ACTIVITY_STATUS_COMPLETED')
  })
})

describe('changes to who else may act wait for every policy of a submitter under MFA', () => {
  it('the always-held authority and destructive changes are real activity paths', () => {
    for (const path of [...AUTHORITY_CHANGES, ...DESTRUCTIVE_CHANGES])
      expect(ACTIVITIES[path as ActivityPath], path).toBeDefined()
  })

  it('a stolen credential cannot delete the wallets or the sub-organization without the code, whatever the condition', async () => {
    const { code } = await totpPolicyOn(keyA, userA)
    const made = resultOf('create_wallet', await submitAs(keyB, 'create_wallet', wallet('savings')))
    for (const [path, params] of [
      ['delete_wallets', { walletIds: [made.walletId], deleteWithoutExport: true }],
      ['delete_sub_organization', { deleteWithoutExport: true }],
    ] as const) {
      const reply = await submitAs(keyA, path, params)
      expect([path, status(reply)]).toEqual([path, 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'])
    }
    expect(await walletCount(keyA)).toBe(1)
    // With the code, the user deletes the wallet.
    const held = await submitAs(keyA, 'delete_wallets', {
      walletIds: [made.walletId],
      deleteWithoutExport: true,
    })
    const done = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(status(done)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await walletCount(keyA)).toBe(0)
  })

  it('a stolen credential cannot make a second root user and act through it without MFA', async () => {
    await totpPolicyOn(keyA, userA)
    const attacker = testKey()
    const created = await submitAs(keyA, 'create_users', newUser(attacker))
    expect(status(created)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    // The attacker's key was not added: it cannot act.
    expect((await submitAs(attacker, 'create_wallet', wallet('w1'))).status).toBe(401)
    expect(await walletCount(keyA)).toBe(0)
    const quorum = await submitAs(keyA, 'update_root_quorum', { threshold: 1, userIds: [userA] })
    expect(status(quorum)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const organization = await h.service.store.get('organizations', org)
    expect(organization?.rootUserIds).toEqual([userA, userB])
  })

  it('policies and user tags: creating, changing and removing them waits too, whatever the condition', async () => {
    await totpPolicyOn(keyA, userA)
    const { policyId } = resultOf(
      'create_policy',
      await submitAs(keyB, 'create_policy', {
        policyName: 'deny exports',
        effect: 'EFFECT_DENY',
        condition: "activity.action == 'EXPORT'",
      }),
    )
    const { userTagId } = resultOf(
      'create_user_tag',
      await submitAs(keyB, 'create_user_tag', { userTagName: 'ops', userIds: [] }),
    )
    const allow = { policyName: 'allow', effect: 'EFFECT_ALLOW', condition: 'true' }
    const attempts: [Parameters<Harness['submit']>[0], Json][] = [
      ['create_policy', allow],
      ['create_policies', { policies: [{ ...allow, policyName: 'allow 2' }] }],
      ['update_policy', { policyId, policyEffect: 'EFFECT_ALLOW' }],
      ['delete_policy', { policyId }],
      ['delete_policies', { policyIds: [policyId] }],
      ['create_user_tag', { userTagName: 'admins', userIds: [userA] }],
      ['update_user_tag', { userTagId, addUserIds: [userA], removeUserIds: [] }],
    ]
    for (const [path, params] of attempts) {
      const reply = await submitAs(keyA, path, params)
      expect([path, status(reply)], JSON.stringify(reply.body)).toEqual([
        path,
        'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
      ])
    }
    const policies = await h.service.store.findBy('policies', 'organizationId', org)
    expect(policies.map((policy) => [policy.name, policy.effect])).toEqual([['deny exports', 'EFFECT_DENY']])
  })

  it('with the code, the held create_users completes', async () => {
    const { code } = await totpPolicyOn(keyA, userA)
    const attacker = testKey()
    const held = await submitAs(keyA, 'create_users', newUser(attacker))
    const done = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(status(done)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(done.body.activity.result.createUsersResult.userIds).toHaveLength(1)
  })

  it('a user without any MFA policy creates users and changes the quorum at once', async () => {
    await totpPolicyOn(keyA, userA)
    const created = await submitAs(keyB, 'create_users', newUser(testKey()))
    expect(status(created)).toBe('ACTIVITY_STATUS_COMPLETED')
    const helper = created.body.activity.result.createUsersResult.userIds[0]
    const quorum = await submitAs(keyB, 'update_root_quorum', {
      threshold: 1,
      userIds: [userA, userB, helper],
    })
    expect(status(quorum)).toBe('ACTIVITY_STATUS_COMPLETED')
  })
})

describe('loosening a spending guard waits for every policy of a submitter under MFA', () => {
  const SHOP = '0x000000000000000000000000000000000000f00d'
  const OTHER = '0x00000000000000000000000000000000000be11a'

  /** A daily limit of 1,000 wei to SHOP only, on `scope`, set by user B (no MFA policy). */
  async function limitOn(scope: Json) {
    return resultOf(
      'latchkey_create_spending_limit',
      await submitAs(keyB, 'latchkey_create_spending_limit', {
        spendingLimitName: 'daily',
        scope,
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
        amount: '1000',
        allowedDestinations: [SHOP],
      }),
    ).spendingLimitId as string
  }
  const limitRow = (id: string) => h.service.store.get('spendingLimits', id)

  it('a stolen session can neither raise, widen nor remove a limit, whatever the condition; lowering, narrowing and renaming run at once', async () => {
    const spendingLimitId = await limitOn({ type: 'SPENDING_LIMIT_SCOPE_USER', userId: userA })
    // The policy's condition is about new wallets only.
    const { code } = await totpPolicyOn(keyA, userA)
    const loosening: Json[] = [
      { spendingLimitId, amount: '1001' },
      { spendingLimitId, allowedDestinations: [SHOP, OTHER] },
      { spendingLimitId, allowedDestinations: [] },
    ]
    const held = []
    for (const params of loosening) {
      const reply = await submitAs(keyA, 'latchkey_update_spending_limit', params)
      expect([params, status(reply)]).toEqual([params, 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'])
      held.push(reply)
    }
    const removal = await submitAs(keyA, 'latchkey_delete_spending_limit', { spendingLimitId })
    expect(status(removal)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    expect(await limitRow(spendingLimitId)).toMatchObject({ amount: '1000', allowedDestinations: [SHOP] })
    // Tightening needs no second factor: a lower amount, the same or fewer addresses, a new name.
    for (const params of [
      { spendingLimitId, amount: '999' },
      { spendingLimitId, allowedDestinations: [SHOP.toUpperCase().replace('0X', '0x')] },
      { spendingLimitId, spendingLimitName: 'careful' },
    ]) {
      const reply = await submitAs(keyA, 'latchkey_update_spending_limit', params)
      expect([params, status(reply)]).toEqual([params, 'ACTIVITY_STATUS_COMPLETED'])
    }
    expect(await limitRow(spendingLimitId)).toMatchObject({ amount: '999', name: 'careful' })
    // With the user's code the held raise runs, once.
    const raised = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: held[0]!.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(status(raised)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await limitRow(spendingLimitId)).toMatchObject({ amount: '1001', allowedDestinations: [SHOP] })
    // A user with no MFA policy raises it at once.
    const byB = await submitAs(keyB, 'latchkey_update_spending_limit', { spendingLimitId, amount: '5000' })
    expect(status(byB)).toBe('ACTIVITY_STATUS_COMPLETED')
  })

  it("a vote is judged the same: a stolen session's approval of another user's raise waits for the voter's code, a lowering's counts at once", async () => {
    const spendingLimitId = await limitOn({ type: 'SPENDING_LIMIT_SCOPE_USER', userId: userA })
    // A's policy is about new wallets only; B has none and proposes, A's vote decides.
    const { code } = await totpPolicyOn(keyA, userA)
    await twoOfTwo()
    const raise = await submitAs(keyB, 'latchkey_update_spending_limit', {
      spendingLimitId,
      amount: '1000000',
    })
    expect(status(raise)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const vote = await submitAs(keyA, 'approve_activity', { fingerprint: raise.body.activity.fingerprint })
    expect(status(vote)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    expect(await limitRow(spendingLimitId)).toMatchObject({ amount: '1000' })
    const widen = await submitAs(keyB, 'latchkey_update_spending_limit', {
      spendingLimitId,
      allowedDestinations: [SHOP, OTHER],
    })
    const widenVote = await submitAs(keyA, 'approve_activity', {
      fingerprint: widen.body.activity.fingerprint,
    })
    expect(status(widenVote)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    expect(await limitRow(spendingLimitId)).toMatchObject({ allowedDestinations: [SHOP] })
    // Tightening needs no code from the voter either.
    const lower = await submitAs(keyB, 'latchkey_update_spending_limit', { spendingLimitId, amount: '10' })
    const lowerVote = await submitAs(keyA, 'approve_activity', {
      fingerprint: lower.body.activity.fingerprint,
    })
    expect(status(lowerVote)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await limitRow(spendingLimitId)).toMatchObject({ amount: '10' })
    // With A's code the held vote counts, and the raise runs, once.
    const proven = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: vote.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(proven.status).toBe(200)
    expect(
      (await queryAs(keyB, 'get_activity', { activityId: raise.body.activity.id })).body.activity.status,
    ).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await limitRow(spendingLimitId)).toMatchObject({ amount: '1000000', allowedDestinations: [SHOP] })
  })

  it("a stolen session cannot widen a session profile's scope or lengthen its sessions; narrowing it to false, a new name or a shorter life run at once", async () => {
    const sessionProfileId = resultOf(
      'create_session_profile',
      await submitAs(keyB, 'create_session_profile', {
        sessionProfileName: 'wallets only',
        scope: "activity.resource == 'WALLET'",
        expirationSeconds: '600',
      }),
    ).sessionProfileId as string
    const profile = () => h.service.store.get('sessionProfiles', sessionProfileId)
    const { code } = await totpPolicyOn(keyA, userA)
    const held = []
    for (const params of [
      { sessionProfileId, scope: 'true' },
      { sessionProfileId, scope: "activity.resource == 'WALLET' || activity.action == 'SIGN'" },
      { sessionProfileId, expirationSeconds: '601' },
    ]) {
      const reply = await submitAs(keyA, 'latchkey_update_session_profile', params)
      expect([params, status(reply)]).toEqual([params, 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'])
      held.push(reply)
    }
    expect(await profile()).toMatchObject({
      scope: "activity.resource == 'WALLET'",
      expirationSeconds: '600',
    })
    for (const params of [
      { sessionProfileId, sessionProfileName: 'careful', notes: 'renamed' },
      { sessionProfileId, expirationSeconds: '300' },
      { sessionProfileId, scope: "activity.resource == 'WALLET'" },
      { sessionProfileId, scope: 'false' },
    ]) {
      const reply = await submitAs(keyA, 'latchkey_update_session_profile', params)
      expect([params, status(reply)]).toEqual([params, 'ACTIVITY_STATUS_COMPLETED'])
    }
    expect(await profile()).toMatchObject({ name: 'careful', scope: 'false', expirationSeconds: '300' })
    // With the user's code the held widening runs, once.
    const widened = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: held[0]!.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(status(widened)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await profile()).toMatchObject({ scope: 'true', expirationSeconds: '300' })
    // A user with no MFA policy widens it at once.
    const byB = await submitAs(keyB, 'latchkey_update_session_profile', {
      sessionProfileId,
      expirationSeconds: '900',
    })
    expect(status(byB)).toBe('ACTIVITY_STATUS_COMPLETED')
  })

  it("removing an agent's limit once its key is gone does not wait (a revoke asks no code for it)", async () => {
    const agent = testKey()
    const { userIds } = resultOf(
      'create_users',
      await submitAs(keyB, 'create_users', newUser(agent, 'agent')),
    )
    const [apiKey] = await h.service.store.findBy('apiKeys', 'userId', userIds[0])
    const spendingLimitId = await limitOn({ type: 'SPENDING_LIMIT_SCOPE_API_KEY', apiKeyId: apiKey!.id })
    const { code } = await totpPolicyOn(keyA, userA)
    // While the agent's key stands, removing its limit lifts its cap: held.
    const early = await submitAs(keyA, 'latchkey_delete_spending_limit', { spendingLimitId })
    expect(status(early)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    // Deleting the agent's user is a destructive change: it waits for A's code too.
    const deletion = await submitAs(keyA, 'delete_users', { userIds })
    expect(status(deletion)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const deleted = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: deletion.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(status(deleted)).toBe('ACTIVITY_STATUS_COMPLETED')
    const removal = await submitAs(keyA, 'latchkey_delete_spending_limit', { spendingLimitId })
    expect(status(removal)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await limitRow(spendingLimitId)).toBeUndefined()
  })

  it("another sub-organization's limit: neither held nor changed, a 404 naming the field", async () => {
    const other = await h.createSubOrganization({ keys: [testKey()] })
    const theirs = resultOf(
      'latchkey_create_spending_limit',
      await h.submit(
        'latchkey_create_spending_limit',
        {
          spendingLimitName: 'theirs',
          scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId: other.userIds[0] },
          window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
          asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
          amount: '1000',
        },
        { as: other.keys[0]!, organizationId: other.organizationId },
      ),
    ).spendingLimitId as string
    await totpPolicyOn(keyA, userA)
    for (const [path, params] of [
      ['latchkey_update_spending_limit', { spendingLimitId: theirs, amount: '1000000' }],
      ['latchkey_delete_spending_limit', { spendingLimitId: theirs }],
    ] as const) {
      const reply = await submitAs(keyA, path, params)
      expect([path, reply.status, reply.body.details?.field ?? reply.body.field]).toEqual([
        path,
        404,
        'parameters.spendingLimitId',
      ])
    }
    expect(await limitRow(theirs)).toMatchObject({ amount: '1000' })
  })
})

describe('a held activity is decided again when it finally runs', () => {
  it('a submitter taken out of the root quorum meanwhile cannot run it with their code, even a week later', async () => {
    const { code } = await totpPolicyOn(keyB, userB)
    const held = await submitAs(keyB, 'create_wallet', wallet('parked'))
    expect(status(held)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    resultOf(
      'update_root_quorum',
      await submitAs(keyA, 'update_root_quorum', { threshold: 1, userIds: [userA] }),
    )
    expect((await submitAs(keyB, 'create_wallet', wallet('fresh'))).status).toBe(403)
    h.clock.advance(7 * 24 * 3600 * 1000)
    const late = await submitAs(keyB, 'latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(late.status).toBe(200)
    expect(status(late)).toBe('ACTIVITY_STATUS_FAILED')
    expect(late.body.activity.failure.message).toContain('no policy of organization')
    expect(await walletCount(keyA)).toBe(0)
    // It is over: nothing can run it again.
    expect(
      (
        await submitAs(keyB, 'latchkey_satisfy_mfa', {
          fingerprint: held.body.activity.fingerprint,
          totpCode: code(),
        })
      ).status,
    ).toBe(412)
  })

  it('the published way (approve_activity with the named passkey) is decided again too', async () => {
    const passkey = softPasskey()
    const [authenticatorId] = resultOf(
      'create_authenticators',
      await submitAs(keyB, 'create_authenticators', { userId: userB, authenticators: [passkey.register()] }),
    ).authenticatorIds
    resultOf(
      'create_mfa_policy',
      await submitAs(keyB, 'create_mfa_policy', {
        userId: userB,
        mfaPolicyName: 'p',
        order: 0,
        condition: WALLETS,
        requiredAuthenticationMethods: [
          { any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY', id: authenticatorId }] },
        ],
      }),
    )
    const held = await submitAs(keyB, 'create_wallet', wallet('parked'))
    expect(status(held)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    resultOf(
      'update_root_quorum',
      await submitAs(keyA, 'update_root_quorum', { threshold: 1, userIds: [userA] }),
    )
    h.clock.advance(1)
    const approved = await h.submit(
      'approve_activity',
      { fingerprint: held.body.activity.fingerprint },
      { as: passkey, organizationId: org },
    )
    expect(status(approved)).toBe('ACTIVITY_STATUS_FAILED')
    expect(await walletCount(keyA)).toBe(0)
  })

  it("a session profile's scope narrowed meanwhile: its session's held activity fails, whoever proves the code", async () => {
    const { code } = await totpPolicyOn(keyA, userA)
    const sessionProfileId = resultOf(
      'create_session_profile',
      await submitAs(keyA, 'create_session_profile', {
        sessionProfileName: 'wallets only',
        scope: "activity.resource == 'WALLET'",
      }),
    ).sessionProfileId as string
    const session = testKey()
    resultOf(
      'stamp_login',
      await submitAs(keyA, 'stamp_login', { publicKey: session.publicKey, sessionProfileId }),
    )
    const held = await submitAs(session, 'create_wallet', wallet('parked'))
    expect(status(held)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    resultOf(
      'latchkey_update_session_profile',
      await submitAs(keyA, 'latchkey_update_session_profile', { sessionProfileId, scope: 'false' }),
    )
    const late = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(status(late)).toBe('ACTIVITY_STATUS_FAILED')
    expect(late.body.activity.failure.details.errorCode).toBe('SESSION_SCOPE_DENIED')
    expect(await walletCount(keyA)).toBe(0)
  })

  it('the credential that submitted it was deleted: it fails', async () => {
    const { code } = await totpPolicyOn(keyB, userB)
    const second = testKey()
    resultOf(
      'create_api_keys',
      await submitAs(keyA, 'create_api_keys', { userId: userB, apiKeys: [second.apiKey('second')] }),
    )
    const held = await submitAs(keyB, 'create_wallet', wallet('parked'))
    expect(status(held)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const keyBId = (await h.service.store.get('activities', held.body.activity.id))!.credentialId
    resultOf(
      'delete_api_keys',
      await submitAs(keyA, 'delete_api_keys', { userId: userB, apiKeyIds: [keyBId] }),
    )
    const late = await submitAs(second, 'latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(status(late)).toBe('ACTIVITY_STATUS_FAILED')
    expect(late.body.activity.failure.message).toContain('is gone')
    expect(await walletCount(keyA)).toBe(0)
  })

  it('one awaiting consensus whose credential was deleted meanwhile fails when the quorum approves it', async () => {
    await twoOfTwo()
    const pending = await submitAs(keyB, 'create_wallet', wallet('pending'))
    expect(status(pending)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const second = testKey()
    const added = await submitAs(keyB, 'create_api_keys', {
      userId: userB,
      apiKeys: [second.apiKey('second')],
    })
    expect(status(added)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    resultOf(
      'approve_activity',
      await submitAs(keyA, 'approve_activity', { fingerprint: added.body.activity.fingerprint }),
    )
    const keyBId = (await h.service.store.get('activities', pending.body.activity.id))!.credentialId
    const removal = await submitAs(second, 'delete_api_keys', { userId: userB, apiKeyIds: [keyBId] })
    resultOf(
      'approve_activity',
      await submitAs(keyA, 'approve_activity', { fingerprint: removal.body.activity.fingerprint }),
    )
    const approved = await submitAs(keyA, 'approve_activity', {
      fingerprint: pending.body.activity.fingerprint,
    })
    expect(status(approved)).toBe('ACTIVITY_STATUS_FAILED')
    expect(await walletCount(keyA)).toBe(0)
  })

  it('one that waited for consensus, then for a code, still runs with the approvals it gathered', async () => {
    const { code } = await totpPolicyOn(keyA, userA)
    await twoOfTwo()
    const held = await submitAs(keyA, 'create_wallet', wallet('two of two'))
    expect(status(held)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const voted = await submitAs(keyB, 'approve_activity', { fingerprint: held.body.activity.fingerprint })
    expect(status(voted)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const done = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(status(done)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await walletCount(keyA)).toBe(1)
  })
})

describe("an approval of another user's activity awaiting consensus is its voter's consent", () => {
  it("waits for the voter's own policies on that activity: a stolen session's vote counts only with the voter's code", async () => {
    const { code } = await totpPolicyOn(keyA, userA)
    await twoOfTwo()
    // B has no policy; B's wallet waits for A's vote.
    const pending = await submitAs(keyB, 'create_wallet', wallet('by B'))
    expect(status(pending)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const stillPending = async () =>
      (await queryAs(keyB, 'get_activity', { activityId: pending.body.activity.id })).body.activity.status
    // A's session alone (a thief's) approves: A's policy would hold the wallet were it A's, so the
    // vote waits for A's code, and the wallet for the vote.
    const vote = await submitAs(keyA, 'approve_activity', { fingerprint: pending.body.activity.fingerprint })
    expect(status(vote)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    expect(vote.body.activity.type).toBe(ACTIVITIES.approve_activity.type)
    expect(await stillPending()).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    expect(await walletCount(keyB)).toBe(0)
    // A wrong code counts nothing; A's code runs the vote, and the vote the wallet, once.
    const wrong = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: vote.body.activity.fingerprint,
      totpCode: '000000',
    })
    expect(codeOf(wrong)).toBe('OTP_INVALID')
    expect(await stillPending()).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const proven = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: vote.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(proven.status).toBe(200)
    expect(await stillPending()).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await walletCount(keyB)).toBe(1)
    // An activity none of A's policies would hold takes A's vote at once.
    const key = await submitAs(keyB, 'create_private_keys', {
      privateKeys: [
        { privateKeyName: 'k', curve: 'CURVE_SECP256K1', addressFormats: [], privateKeyTags: [] },
      ],
    })
    expect(status(key)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const approved = await submitAs(keyA, 'approve_activity', { fingerprint: key.body.activity.fingerprint })
    expect(status(approved)).toBe('ACTIVITY_STATUS_COMPLETED')
    // A held vote on an activity rejected meanwhile (here by the voter, who changed their mind:
    // a rejection is never held) counts nothing when its code comes: it fails.
    const later = await submitAs(keyB, 'create_wallet', wallet('withdrawn'))
    const heldVote = await submitAs(keyA, 'approve_activity', {
      fingerprint: later.body.activity.fingerprint,
    })
    expect(status(heldVote)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const rejected = await submitAs(keyA, 'reject_activity', { fingerprint: later.body.activity.fingerprint })
    expect(status(rejected)).toBe('ACTIVITY_STATUS_REJECTED')
    const late = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: heldVote.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(status(late)).toBe('ACTIVITY_STATUS_FAILED')
    const record = await queryAs(keyA, 'get_activity', { activityId: heldVote.body.activity.id })
    expect(JSON.stringify(record.body.activity)).toMatch(/ACTIVITY_NOT_VOTABLE/)
    expect(await walletCount(keyB)).toBe(1)
  })

  it('the published way: a held vote is proven by approve_activity stamped by the named key, and a vote stamped by that key counts at once', async () => {
    const second = await namedKeyPolicyOnA()
    await twoOfTwo()
    const first = await submitAs(keyB, 'create_wallet', wallet('first'))
    const vote = await submitAs(keyA, 'approve_activity', { fingerprint: first.body.activity.fingerprint })
    expect(status(vote)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    h.clock.advance(1)
    const proven = await h.submit(
      'approve_activity',
      { fingerprint: vote.body.activity.fingerprint },
      { as: second, organizationId: org },
    )
    expect(proven.status).toBe(200)
    expect(await walletCount(keyB)).toBe(1)
    // Stamped by the named key in the first place, the vote proves the step itself.
    const next = await submitAs(keyB, 'create_wallet', wallet('second'))
    h.clock.advance(1)
    const direct = await h.submit(
      'approve_activity',
      { fingerprint: next.body.activity.fingerprint },
      { as: second, organizationId: org },
    )
    expect(status(direct)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await walletCount(keyB)).toBe(2)
  })
})

describe('a deleted sub-organization takes what the wings keep of it', () => {
  it("its users' factors, recovery codes and MFA policies, its spending limits and session profiles are gone", async () => {
    const { secret } = await enrolTotp(keyA, userA)
    resultOf(
      'latchkey_create_recovery_codes',
      await submitAs(keyA, 'latchkey_create_recovery_codes', { userId: userA }),
    )
    await policyOn(keyA, userA)
    resultOf(
      'latchkey_create_spending_limit',
      await submitAs(keyA, 'latchkey_create_spending_limit', {
        spendingLimitName: 'a day',
        scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId: userA },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
        amount: '10',
      }),
    )
    resultOf(
      'create_session_profile',
      await submitAs(keyA, 'create_session_profile', { sessionProfileName: 'agent', scope: 'true' }),
    )
    const tables = [
      'mfaFactors',
      'mfaRecoveryCodes',
      'mfaPolicies',
      'spendingLimits',
      'sessionProfiles',
    ] as const
    const left = async () =>
      Object.fromEntries(
        await Promise.all(
          tables.map(async (table) => [
            table,
            (await h.service.store.all(table)).filter((row) => row.organizationId === org).length,
          ]),
        ),
      )
    for (const count of Object.values(await left())) expect(count).toBeGreaterThan(0)
    // A destructive change: held for userA's code, then run.
    const held = await submitAs(keyA, 'delete_sub_organization', {})
    expect(held.body.activity?.status, JSON.stringify(held.body)).toBe(
      'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
    )
    const done = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: totp(secret, h.clock.now()),
    })
    expect(done.body.activity?.status, JSON.stringify(done.body)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await left()).toEqual(Object.fromEntries(tables.map((table) => [table, 0])))
  })
})
