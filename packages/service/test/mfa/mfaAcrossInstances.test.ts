// The MFA wing's "only once" rules and its attempt budget across two service instances on one
// PostgreSQL database: a second instance must be no second chance. A held activity runs once
// however many approvals race on both; a TOTP code and a recovery code are each accepted once;
// a user's code attempts are counted on both together (the store's shared rate-limit buckets); a
// user's caps (5 TOTP factors, 20 MFA policies) hold when creates race on both. A user's
// authority changes (AUTHORITY_CHANGES: adding a user, the root quorum, policies) are held for the
// second factor whichever instance they, their policy and their approvals reach, and in whatever
// order the database takes them. So is a root user's approval of another user's activity (their
// consent to it), and lifting a spending guard (a raised limit). A user's own budget of MFA codes
// (e-mail and SMS together) is one budget on both, and so is the service's hourly SMS budget
// (sign-in, verification and MFA codes alike).
import { ACTIVITIES, type ActivityPath } from '@latchkey/protocol'
import { base32nopad } from '@scure/base'
import { describe, expect, it } from 'vitest'
import { totp } from '../../src/mfa/totp.ts'
import { ETHEREUM_ACCOUNT, type Harness, resultOf, type TestKey, testKey } from '../../src/testing/harness.ts'
import { latestCode } from '../../src/testing/latestCode.ts'
import { twoInstances as twoOnPostgres, usePostgres, useTwoInstances } from '../support/twoInstances.ts'

const postgres = usePostgres()

const twoInstances = (database: string) => twoOnPostgres(postgres.cluster, database)

const codeOf = (reply: { body: { errorCode?: string; details?: { errorCode?: string } } }) =>
  reply.body.errorCode ?? reply.body.details?.errorCode

/**
 * A sub-organization (made on A) whose root user enrolled TOTP and has a policy on wallet creation
 * (none with `policy: false`); `others`: more root users, with these keys (threshold 1).
 */
async function account(a: Harness, steps?: unknown, { policy = true, others = [] as TestKey[] } = {}) {
  const key = testKey()
  const sub = await a.createSubOrganization({ keys: [key, ...others] })
  const org = sub.organizationId
  const userId = sub.userIds[0]!
  const submit = (
    h: Harness,
    path: Parameters<Harness['submit']>[0],
    params: unknown,
    as: TestKey = key,
    at = 0,
  ) => h.submit(path, params, { as, organizationId: org, timestampMs: String(h.clock.now() + at) })
  a.clock.advance(1)
  const enrolled = resultOf(
    'latchkey_create_totp_factor',
    await submit(a, 'latchkey_create_totp_factor', { userId }),
  )
  const secret = base32nopad.decode(enrolled.secret)
  a.clock.advance(1)
  resultOf(
    'latchkey_confirm_totp_factor',
    await submit(a, 'latchkey_confirm_totp_factor', {
      userId,
      factorId: enrolled.factorId,
      code: totp(secret, a.clock.now()),
    }),
  )
  a.clock.advance(30_000)
  const policyParameters = {
    userId,
    mfaPolicyName: 'wallets',
    condition: "activity.resource == 'WALLET'",
    requiredAuthenticationMethods: steps ?? [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
    order: 0,
  }
  if (policy) resultOf('create_mfa_policy', await submit(a, 'create_mfa_policy', policyParameters))
  const held = async (h: Harness, name: string) => {
    h.clock.advance(1)
    const reply = await submit(h, 'create_wallet', { walletName: name, accounts: [ETHEREUM_ACCOUNT] })
    expect(reply.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    return reply.body.activity.fingerprint as string
  }
  const wallets = async (h: Harness) =>
    (await h.query('list_wallets', { organizationId: org }, { as: key, organizationId: org })).body.wallets
      .length
  /** A TOTP code of a step no earlier code used (the clock moves on a step). */
  const code = () => {
    a.clock.advance(30_000)
    return totp(secret, a.clock.now())
  }
  /** The organization's users, as the database has them now. */
  const users = async () => (await a.service.store.findBy('users', 'organizationId', org)).length
  return {
    key,
    org,
    userId,
    userIds: sub.userIds,
    secret,
    submit,
    held,
    wallets,
    code,
    users,
    policyParameters,
  }
}

describe('MFA across two instances on PostgreSQL', { timeout: 120_000 }, () => {
  const pair = useTwoInstances('mfa_instances', { postgres })

  it('code attempts are counted on both instances together: the budget spent on A and B refuses a right code', async () => {
    const { a, b } = pair
    const user = await account(a)
    const fingerprint = await user.held(a, 'budget')
    // The confirmation spent one attempt of five; four wrong guesses, alternating, spend the rest.
    for (let i = 0; i < 4; i++) {
      const reply = await user.submit(
        i % 2 ? b : a,
        'latchkey_satisfy_mfa',
        { fingerprint, totpCode: '000000' },
        user.key,
        i + 1,
      )
      expect(codeOf(reply)).toBe('OTP_INVALID')
    }
    for (const h of [a, b]) {
      const right = await user.submit(
        h,
        'latchkey_satisfy_mfa',
        { fingerprint, totpCode: totp(user.secret, h.clock.now()) },
        user.key,
        10,
      )
      expect([right.status, codeOf(right)]).toEqual([429, 'OTP_ATTEMPTS_EXCEEDED'])
    }
    expect(await user.wallets(b)).toBe(0)
  })

  it('one TOTP code sent to A and B at once for two held activities is accepted once', async () => {
    const { a, b } = pair
    const user = await account(a)
    const first = await user.held(a, 'one')
    const second = await user.held(b, 'two')
    const code = totp(user.secret, a.clock.now())
    const replies = await Promise.all(
      [first, second].map((fingerprint, i) =>
        user.submit(i ? b : a, 'latchkey_satisfy_mfa', { fingerprint, totpCode: code }, user.key, i + 1),
      ),
    )
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 400])
    expect(replies.map(codeOf).filter(Boolean)).toEqual(['OTP_INVALID'])
    expect(await user.wallets(a)).toBe(1)
  })

  it('a held activity runs once under 10 approvals racing on both instances', async () => {
    const { a, b } = pair
    const second = testKey()
    const key = testKey()
    const sub = await a.createSubOrganization({ keys: [key] })
    const org = sub.organizationId
    const userId = sub.userIds[0]!
    a.clock.advance(1)
    const [keyId] = resultOf(
      'create_api_keys',
      await a.submit(
        'create_api_keys',
        { userId, apiKeys: [second.apiKey('second')] },
        { as: key, organizationId: org },
      ),
    ).apiKeyIds
    a.clock.advance(1)
    resultOf(
      'create_mfa_policy',
      await a.submit(
        'create_mfa_policy',
        {
          userId,
          mfaPolicyName: 'wallets',
          condition: "activity.resource == 'WALLET'",
          requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_API_KEY', id: keyId }] }],
          order: 0,
        },
        { as: key, organizationId: org },
      ),
    )
    a.clock.advance(1)
    const held = await a.submit(
      'create_wallet',
      { walletName: 'raced', accounts: [ETHEREUM_ACCOUNT] },
      { as: key, organizationId: org },
    )
    expect(held.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        [a, b][i % 2]!.submit(
          'approve_activity',
          { fingerprint: held.body.activity.fingerprint },
          { as: second, organizationId: org, timestampMs: String(a.clock.now() + i) },
        ),
      ),
    )
    expect(replies.filter((reply) => reply.status >= 500)).toEqual([])
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1)
    const wallets = await b.query('list_wallets', { organizationId: org }, { as: key, organizationId: org })
    expect(wallets.body.wallets).toHaveLength(1)
  })

  it('one recovery code used on A and B at once wins once', async () => {
    const { a, b } = pair
    const user = await account(a)
    a.clock.advance(1)
    // Minting codes once a factor is held waits for the user's policies: the code that satisfies
    // it is answered the codes, shown once.
    const minting = await user.submit(a, 'latchkey_create_recovery_codes', { userId: user.userId })
    expect(minting.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const minted = await user.submit(
      b,
      'latchkey_satisfy_mfa',
      {
        fingerprint: minting.body.activity.fingerprint,
        totpCode: totp(user.secret, b.clock.now()),
      },
      user.key,
      1,
    )
    expect(minted.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    const recoveryCodes = minted.body.activity.result.latchkeyCreateRecoveryCodesResult
      .recoveryCodes as string[]
    expect(recoveryCodes).toHaveLength(10)
    const first = await user.held(a, 'one')
    const second = await user.held(b, 'two')
    const replies = await Promise.all(
      [first, second].map((fingerprint, i) =>
        user.submit(
          i ? b : a,
          'latchkey_satisfy_mfa',
          { fingerprint, recoveryCode: recoveryCodes[0] },
          user.key,
          i + 1,
        ),
      ),
    )
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 400])
    expect(await user.wallets(b)).toBe(1)
  })

  it('an e-mail code sent on A proves its activity once when spent on A and B at once; guesses on both count together', async () => {
    const { a, b } = pair
    const key = testKey()
    const email = 'twice@example.com'
    a.clock.advance(1)
    const created = resultOf(
      'create_sub_organization',
      await a.submit('create_sub_organization', {
        subOrganizationName: 'Contact codes',
        rootUsers: [
          {
            userName: 'Ada',
            userEmail: email,
            apiKeys: [key.apiKey('key')],
            authenticators: [],
            oauthProviders: [],
          },
        ],
        rootQuorumThreshold: 1,
      }),
    )
    const org = created.subOrganizationId as string
    const submit = (h: Harness, path: Parameters<Harness['submit']>[0], params: unknown, at = 0) =>
      h.submit(path, params, { as: key, organizationId: org, timestampMs: String(h.clock.now() + at) })
    a.clock.advance(1)
    resultOf(
      'create_mfa_policy',
      await submit(a, 'create_mfa_policy', {
        userId: created.rootUserIds[0],
        mfaPolicyName: 'wallets',
        condition: "activity.resource == 'WALLET'",
        requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }] }],
        order: 0,
      }),
    )
    a.clock.advance(1)
    const held = await submit(a, 'create_wallet', { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] })
    const fingerprint = held.body.activity.fingerprint as string
    a.clock.advance(1)
    resultOf(
      'latchkey_send_mfa_code',
      await submit(a, 'latchkey_send_mfa_code', { fingerprint, type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }),
    )
    const code = await latestCode(a.service, email)
    const wrong = code === '000000' ? '111111' : '000000'
    // A wrong guess on B is counted against the same code and user as one on A.
    expect(codeOf(await submit(b, 'latchkey_satisfy_mfa', { fingerprint, contactCode: wrong }, 1))).toBe(
      'OTP_INVALID',
    )
    const replies = await Promise.all(
      [a, b].map((h, i) => submit(h, 'latchkey_satisfy_mfa', { fingerprint, contactCode: code }, i + 2)),
    )
    expect(
      replies.filter((reply) => reply.body.activity?.status === 'ACTIVITY_STATUS_COMPLETED'),
    ).toHaveLength(1)
    expect(replies.filter((reply) => reply.status !== 200)).toHaveLength(1)
    const wallets = await b.query('list_wallets', { organizationId: org }, { as: key, organizationId: org })
    expect(wallets.body.wallets).toHaveLength(1)
  })

  it("a user's MFA codes raced on A and B (4 e-mails, 4 texts at once) get at most the user's own 5 a minute, not each contact's 3", async () => {
    const { a, b } = pair
    const key = testKey()
    a.clock.advance(1)
    const created = resultOf(
      'create_sub_organization',
      await a.submit('create_sub_organization', {
        subOrganizationName: 'Codes per user',
        rootUsers: [
          {
            userName: 'Ada',
            userEmail: 'per-user@example.com',
            userPhoneNumber: '+14155550142',
            apiKeys: [key.apiKey('key')],
            authenticators: [],
            oauthProviders: [],
          },
        ],
        rootQuorumThreshold: 1,
      }),
    )
    const org = created.subOrganizationId as string
    const submit = (h: Harness, path: Parameters<Harness['submit']>[0], params: unknown, at = 0) =>
      h.submit(path, params, { as: key, organizationId: org, timestampMs: String(h.clock.now() + at) })
    a.clock.advance(1)
    resultOf(
      'create_mfa_policy',
      await submit(a, 'create_mfa_policy', {
        userId: created.rootUserIds[0],
        mfaPolicyName: 'wallets',
        condition: "activity.resource == 'WALLET'",
        requiredAuthenticationMethods: [
          { any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }, { type: 'AUTHENTICATION_TYPE_SMS_OTP' }] },
        ],
        order: 0,
      }),
    )
    // One held activity per code, so that the codes race on the budgets alone.
    const fingerprints: string[] = []
    for (let i = 0; i < 8; i++) {
      a.clock.advance(1)
      const held = await submit(a, 'create_wallet', { walletName: `w${i}`, accounts: [ETHEREUM_ACCOUNT] })
      fingerprints.push(held.body.activity.fingerprint)
    }
    a.clock.advance(1)
    const replies = await Promise.all(
      fingerprints.map((fingerprint, i) =>
        submit([a, b][i % 2]!, 'latchkey_send_mfa_code', {
          fingerprint,
          type: i < 4 ? 'AUTHENTICATION_TYPE_EMAIL_OTP' : 'AUTHENTICATION_TYPE_SMS_OTP',
        }),
      ),
    )
    const sent = replies.filter((reply) => reply.status === 200)
    expect(sent.length).toBeGreaterThan(0)
    expect(sent.length).toBeLessThanOrEqual(5)
    expect(replies.filter((reply) => reply.status !== 200).map(codeOf)).toEqual(
      Array(8 - sent.length).fill('OTP_RATE_LIMITED'),
    )
  })

  it("a policy needing the e-mail and the e-mail's removal, raced on A and B: one wins, never both", async () => {
    const { a, b } = pair
    const pairs = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const ada = testKey()
        const bob = testKey()
        const email = `race${i}-${Math.random().toString(36).slice(2, 8)}@example.com`
        const created = await a.submit(
          'create_sub_organization',
          {
            subOrganizationName: `Race ${i}`,
            rootUsers: [
              { userName: 'Ada', userEmail: email, key: ada },
              { userName: 'Bob', key: bob },
            ].map(({ key, ...user }) => ({
              ...user,
              apiKeys: [key.apiKey('key')],
              authenticators: [],
              oauthProviders: [],
            })),
            rootQuorumThreshold: 1,
          },
          { timestampMs: String(a.clock.now() + i) },
        )
        const result = resultOf('create_sub_organization', created)
        return { ada, bob, org: result.subOrganizationId as string, userId: result.rootUserIds[0] as string }
      }),
    )
    a.clock.advance(100)
    const replies = await Promise.all(
      pairs.flatMap(({ ada, bob, org, userId }) => [
        // Ada puts an e-mail-only policy on herself on A…
        a.submit(
          'create_mfa_policy',
          {
            userId,
            mfaPolicyName: 'exports',
            condition: "activity.action == 'EXPORT'",
            requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }] }],
            order: 0,
          },
          { as: ada, organizationId: org },
        ),
        // …while Bob, another root user, removes her e-mail on B.
        b.submit('update_user_email', { userId, userEmail: '' }, { as: bob, organizationId: org }),
      ]),
    )
    expect(replies.filter((reply) => reply.status >= 500)).toEqual([])
    for (const [i, { org, userId }] of pairs.entries()) {
      const [policy, removal] = [replies[2 * i]!, replies[2 * i + 1]!]
      // Either order is a refusal of the second, naming what it would break.
      expect([policy.status, removal.status].sort()).toEqual([200, 400])
      const refused = policy.status === 400 ? policy : removal
      expect(refused.body.details?.field).toBe(
        policy.status === 400 ? 'parameters.requiredAuthenticationMethods[0].any' : 'parameters.userEmail',
      )
      const policies = (await b.service.store.findBy('mfaPolicies', 'organizationId', org)).filter(
        (row) => row.userId === userId,
      )
      const user = (await b.service.store.get('users', userId))!
      const verified = user.userEmail !== undefined && !user.userEmailUnverified
      expect({ policies: policies.length, verified }).toEqual(
        policy.status === 200 ? { policies: 1, verified: true } : { policies: 0, verified: false },
      )
    }
  })

  it("a policy needing the user's only TOTP factor and that factor's removal, raced on A and B: one wins, never both", async () => {
    const { a, b } = pair
    // Each user holds one confirmed factor and no policy yet, so the removal is not held: both
    // run at once, and each re-judges, in its own SERIALIZABLE transaction, what the other wrote.
    // One after the other: each enrolment reads the shared clock for its code.
    const users = []
    for (let i = 0; i < 6; i++) {
      const user = await account(a, undefined, { policy: false })
      const [factor] = await a.service.store.findBy('mfaFactors', 'userId', user.userId)
      users.push({ ...user, factorId: factor!.id })
    }
    a.clock.advance(100)
    const replies = await Promise.all(
      users.flatMap(({ submit, policyParameters, userId, factorId }, i) => [
        submit(
          [a, b][i % 2]!,
          'create_mfa_policy',
          { ...policyParameters, condition: "activity.action == 'EXPORT'" },
          undefined,
          i,
        ),
        submit([b, a][i % 2]!, 'latchkey_delete_totp_factor', { userId, factorId }, undefined, i),
      ]),
    )
    expect(replies.filter((reply) => reply.status >= 500)).toEqual([])
    for (const [i, { userId }] of users.entries()) {
      const [policy, removal] = [replies[2 * i]!, replies[2 * i + 1]!]
      // Either order is a refusal of the second, naming what it would leave unprovable.
      expect([policy.status, removal.status].sort()).toEqual([200, 400])
      expect(policy.status === 200 ? policy.body.activity.status : removal.body.activity.status).toBe(
        'ACTIVITY_STATUS_COMPLETED',
      )
      const refused = policy.status === 400 ? policy : removal
      expect(refused.body.details?.field).toBe(
        policy.status === 400 ? 'parameters.requiredAuthenticationMethods[0].any' : 'parameters.factorId',
      )
      const policies = await b.service.store.findBy('mfaPolicies', 'userId', userId)
      const factors = await b.service.store.findBy('mfaFactors', 'userId', userId)
      expect({ policies: policies.length, factors: factors.length }).toEqual(
        policy.status === 200 ? { policies: 1, factors: 1 } : { policies: 0, factors: 0 },
      )
    }
  })

  it('at most 5 TOTP factors and 20 MFA policies a user: creates raced over both make exactly what fits', async () => {
    const { a, b } = pair
    // A user with no confirmed factor enrols freely (with one, enrolling another needs it).
    const key = testKey()
    const sub = await a.createSubOrganization({ keys: [key] })
    const fresh = sub.userIds[0]!
    const enrol = (h: Harness, name: string, at: number) =>
      h.submit(
        'latchkey_create_totp_factor',
        { userId: fresh, factorName: name },
        { as: key, organizationId: sub.organizationId, timestampMs: String(h.clock.now() + at) },
      )
    for (let n = 0; n < 3; n++) resultOf('latchkey_create_totp_factor', await enrol(a, `f${n}`, n))
    const factors = await Promise.all(
      Array.from({ length: 6 }, (_, i) => enrol([a, b][i % 2]!, `r${i}`, i + 10)),
    )
    expect(factors.filter((reply) => reply.status === 200)).toHaveLength(2)
    for (const reply of factors.filter((reply) => reply.status !== 200))
      expect([reply.status, reply.body.details?.field, reply.body.message]).toEqual([
        400,
        'parameters.userId',
        expect.stringMatching(/holds at most 5 TOTP factors/),
      ])
    expect(await a.service.store.count('mfaFactors', 'userId', fresh)).toBe(5)

    // A user with a confirmed factor and 1 policy (`account`): 18 more, then 6 at once.
    const { userId, submit } = await account(a)
    const policy = (name: string) => ({
      userId,
      mfaPolicyName: name,
      // What these gate is what `account`'s does (wallets), not the creates that follow.
      condition: "activity.resource == 'WALLET'",
      requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
      order: 1,
    })
    for (let n = 0; n < 18; n++) {
      const made = await submit(a, 'create_mfa_policy', policy(`p${n}`), undefined, n + 20)
      expect(made.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    }
    const policies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        submit([a, b][i % 2]!, 'create_mfa_policy', policy(`r${i}`), undefined, i + 40),
      ),
    )
    expect(policies.filter((reply) => reply.status === 200)).toHaveLength(1)
    for (const reply of policies.filter((reply) => reply.status !== 200))
      expect([reply.status, reply.body.details?.field]).toEqual([400, 'parameters.userId'])
    expect(await b.service.store.findBy('mfaPolicies', 'userId', userId)).toHaveLength(20)
  })
})

const HELD = 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'
const statusOf = (reply: { body: { activity?: { status?: string } } }) => reply.body.activity?.status
/** `create_users` adding one user whose API key is the attacker's. */
const newUser = (attacker: TestKey, name: string) => ({
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

/** One signed request, sent as is (the same body and stamp) to whichever instance is given. */
function signed(
  path: ActivityPath,
  parameters: unknown,
  { key, org, at }: { key: TestKey; org: string; at: number },
) {
  const body = JSON.stringify({
    type: ACTIVITIES[path].type,
    timestampMs: String(at),
    organizationId: org,
    parameters,
  })
  const [header, value] = key.stamp(body)
  return (h: Harness) => h.post(`/public/v1/submit/${path}`, body, { [header]: value })
}

// The attacker holds the first factor (the user's API key or session) of a user under an MFA
// policy and can send anything to either instance, at once, or again. The authority rule: a user
// under any MFA policy adds no user, changes no root quorum, policy or tag without the second
// factor (mfaGate.ts's AUTHORITY_CHANGES), whichever instance sees which request.
describe('authority changes of a user under MFA, across two instances on PostgreSQL', {
  timeout: 120_000,
}, () => {
  const pair = useTwoInstances('mfa_authority', { postgres })

  it("held on A; a wrong, a spent or a replayed code and the stolen key's own approval on B leave it held; two valid codes raced on A and B run it once", async () => {
    const { a, b } = pair
    const user = await account(a)
    const before = await user.users()
    const attacker = testKey()
    a.clock.advance(1)
    const held = await user.submit(a, 'create_users', newUser(attacker, 'mallory'))
    expect(statusOf(held)).toBe(HELD)
    const { id, fingerprint } = held.body.activity as { id: string; fingerprint: string }
    // Whatever the policy's condition (wallets), the other authority changes wait too, on B.
    const others: [ActivityPath, unknown][] = [
      ['update_root_quorum', { threshold: 1, userIds: [user.userId] }],
      ['create_policy', { policyName: 'allow all', effect: 'EFFECT_ALLOW', condition: 'true' }],
      ['create_user_tag', { userTagName: 'admins', userIds: [user.userId] }],
    ]
    for (const [i, [path, parameters]] of others.entries())
      expect([path, statusOf(await user.submit(b, path, parameters, user.key, i + 1))]).toEqual([path, HELD])
    // The attacker's key was not added: it acts nowhere.
    expect(
      (
        await b.submit(
          'create_wallet',
          { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] },
          { as: attacker, organizationId: user.org },
        )
      ).status,
    ).toBe(401)

    // The victim spends a code on A (a held wallet); the attacker sees the request.
    const wallet = await user.held(a, 'spent')
    const spent = user.code()
    const satisfyWallet = signed(
      'latchkey_satisfy_mfa',
      { fingerprint: wallet, totpCode: spent },
      { key: user.key, org: user.org, at: a.clock.now() },
    )
    const first = await satisfyWallet(a)
    expect(statusOf(first)).toBe('ACTIVITY_STATUS_COMPLETED')
    // Replayed as is to B: answered with what it recorded the first time (that satisfaction, not a
    // new one); nothing more is proven.
    const replayed = await satisfyWallet(b)
    expect(replayed.status).toBe(200)
    expect(
      (await b.service.store.findBy('activities', 'fingerprint', replayed.body.activity.fingerprint)).map(
        (row) => row.id,
      ),
    ).toEqual([replayed.body.activity.id])
    expect(await user.wallets(b)).toBe(1)
    // The spent code, a wrong one, on B.
    const satisfy = (h: Harness, totpCode: string, at: number) =>
      user.submit(h, 'latchkey_satisfy_mfa', { fingerprint, totpCode }, user.key, at)
    expect([codeOf(await satisfy(b, spent, 1))]).toEqual(['OTP_INVALID'])
    const valid = [-30_000, 0, 30_000].map((skew) => totp(user.secret, a.clock.now() + skew))
    const wrong = ['000000', '111111', '222222', '333333'].find((guess) => !valid.includes(guess))!
    expect([codeOf(await satisfy(b, wrong, 2))]).toEqual(['OTP_INVALID'])
    // approve_activity stamped by the stolen key proves an API key, which no step names.
    const approved = await user.submit(b, 'approve_activity', { fingerprint }, user.key, 3)
    expect(approved.status).toBe(403)
    expect((await b.service.store.get('activities', id))?.status).toBe(HELD)
    expect(await user.users()).toBe(before)

    // Past the attempt budget's window, two valid codes (this step's and the next) at once.
    a.clock.advance(301_000)
    const codes = [totp(user.secret, a.clock.now()), totp(user.secret, a.clock.now() + 30_000)]
    const replies = await Promise.all([a, b].map((h, i) => satisfy(h, codes[i]!, i + 10)))
    expect(replies.filter((reply) => reply.status >= 500)).toEqual([])
    const won = replies.filter((reply) => reply.status === 200)
    expect(won.map(statusOf)).toEqual(['ACTIVITY_STATUS_COMPLETED'])
    expect(won[0]!.body.activity.id).toBe(id)
    const lost = replies.find((reply) => reply.status !== 200)!
    expect([
      [400, 'OTP_INVALID'],
      [412, 'ACTIVITY_NOT_VOTABLE'],
    ]).toContainEqual([lost.status, codeOf(lost)])
    expect(await user.users()).toBe(before + 1)
    const names = (await a.service.store.findBy('users', 'organizationId', user.org)).map(
      (row) => row.userName,
    )
    expect(names.filter((name) => name === 'mallory')).toHaveLength(1)
  })

  it("a stolen key's approval of another user's wallet, sent to A and B at once, is one vote held on both; the voter's two codes raced on A and B count it once", async () => {
    const { a, b } = pair
    const other = testKey()
    const user = await account(a, undefined, { others: [other] })
    // The other root user (no policy) makes every activity wait for both, then asks for a wallet.
    a.clock.advance(1)
    const quorum = await user.submit(a, 'update_root_quorum', { threshold: 2, userIds: user.userIds }, other)
    expect(statusOf(quorum)).toBe('ACTIVITY_STATUS_COMPLETED')
    const pending = await user.submit(
      b,
      'create_wallet',
      { walletName: 'by other', accounts: [ETHEREUM_ACCOUNT] },
      other,
      1,
    )
    expect(statusOf(pending)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const wanted = pending.body.activity as { id: string; fingerprint: string }
    // The attacker holds the voter's key: the same signed approval to both instances at once.
    const vote = signed(
      'approve_activity',
      { fingerprint: wanted.fingerprint },
      { key: user.key, org: user.org, at: a.clock.now() + 2 },
    )
    const votes = await Promise.all([vote(a), vote(b)])
    expect(votes.map(statusOf)).toEqual([HELD, HELD])
    const held = votes[0]!.body.activity as { id: string; fingerprint: string }
    expect(votes[1]!.body.activity.id).toBe(held.id)
    expect((await a.service.store.get('activities', wanted.id))?.status).toBe(
      'ACTIVITY_STATUS_CONSENSUS_NEEDED',
    )
    expect(await user.wallets(b)).toBe(0)
    // The voter's codes (this step's and the next) on A and B at once: the vote counts once, and
    // the wallet is made once.
    const codes = [totp(user.secret, a.clock.now()), totp(user.secret, a.clock.now() + 30_000)]
    const replies = await Promise.all(
      [a, b].map((h, i) =>
        user.submit(
          h,
          'latchkey_satisfy_mfa',
          { fingerprint: held.fingerprint, totpCode: codes[i]! },
          user.key,
          i + 10,
        ),
      ),
    )
    expect(replies.filter((reply) => reply.status >= 500)).toEqual([])
    const won = replies.filter((reply) => reply.status === 200)
    expect(won.map((reply) => [reply.body.activity.id, statusOf(reply)])).toEqual([
      [held.id, 'ACTIVITY_STATUS_COMPLETED'],
    ])
    const lost = replies.find((reply) => reply.status !== 200)!
    expect([
      [400, 'OTP_INVALID'],
      [412, 'ACTIVITY_NOT_VOTABLE'],
    ]).toContainEqual([lost.status, codeOf(lost)])
    expect((await b.service.store.get('activities', wanted.id))?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await user.wallets(a)).toBe(1)
  })

  it('an MFA policy created on A while its user sends an authority change to B: held whenever the policy was answered first, never run past it', async () => {
    const { a, b } = pair
    const users = []
    for (let i = 0; i < 8; i++) users.push(await account(a, undefined, { policy: false }))
    a.clock.advance(1)
    // Sent together, a little later, or once the policy is answered: the database picks the order.
    const delays = [0, 0, 1, 2, 5, 10, 20, -1]
    const raced = await Promise.all(
      users.map(async (user, i) => {
        let answeredAt = Number.POSITIVE_INFINITY
        const policy = user
          .submit(a, 'create_mfa_policy', user.policyParameters, user.key, 1)
          .then((reply) => {
            answeredAt = performance.now()
            return reply
          })
        const delay = delays[i]!
        if (delay < 0) await policy
        else if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay))
        const sentAt = performance.now()
        const change = await user.submit(b, 'create_users', newUser(testKey(), 'mallory'), user.key, 2)
        return { user, policy: await policy, change, policyFirst: answeredAt < sentAt }
      }),
    )
    expect(raced.filter(({ policy, change }) => policy.status >= 500 || change.status >= 500)).toEqual([])
    for (const { user, policy, change, policyFirst } of raced) {
      expect(statusOf(policy)).toBe('ACTIVITY_STATUS_COMPLETED')
      const status = statusOf(change)
      if (policyFirst) expect(status).toBe(HELD)
      else expect([HELD, 'ACTIVITY_STATUS_COMPLETED']).toContain(status)
      const challenge = await a.service.store.get('mfaChallenges', change.body.activity.id)
      if (status === HELD) {
        // It waits for the policy it saw; the code runs it, decided again on A.
        expect(challenge?.policies.map((entry) => entry.policyId)).toEqual([
          policy.body.activity.result.createMfaPolicyResult.mfaPolicyId,
        ])
        expect(await user.users()).toBe(1)
        const done = await user.submit(
          a,
          'latchkey_satisfy_mfa',
          { fingerprint: change.body.activity.fingerprint, totpCode: totp(user.secret, a.clock.now()) },
          user.key,
          3,
        )
        expect(statusOf(done)).toBe('ACTIVITY_STATUS_COMPLETED')
      } else expect(challenge).toBeUndefined()
      expect(await user.users()).toBe(2)
      // Once both are in, another one is held on either instance.
      for (const [i, h] of [a, b].entries())
        expect(
          statusOf(await user.submit(h, 'create_users', newUser(testKey(), `late${i}`), user.key, 4 + i)),
        ).toBe(HELD)
    }
  })

  it('one awaiting the root quorum when its submitter gets an MFA policy on A is held, not run, when the quorum approves on B; the code then runs it once', async () => {
    const { a, b } = pair
    const bob = testKey()
    const user = await account(a, undefined, { policy: false, others: [bob] })
    const [ada, bobId] = user.userIds as [string, string]
    const asBob = (h: Harness, path: ActivityPath, parameters: unknown) => {
      a.clock.advance(1)
      return h.submit(path, parameters, { as: bob, organizationId: user.org })
    }
    resultOf(
      'update_root_quorum',
      await asBob(b, 'update_root_quorum', { threshold: 2, userIds: [ada, bobId] }),
    )
    a.clock.advance(1)
    const pending = await user.submit(b, 'create_users', newUser(testKey(), 'mallory'))
    expect(statusOf(pending)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    // The policy (itself waiting for the quorum) is put on Ada on A.
    a.clock.advance(1)
    const policy = await user.submit(a, 'create_mfa_policy', user.policyParameters)
    expect(statusOf(policy)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const made = await asBob(b, 'approve_activity', { fingerprint: policy.body.activity.fingerprint })
    expect(statusOf(made)).toBe('ACTIVITY_STATUS_COMPLETED')
    const before = await user.users()
    // Bob's approval completes the quorum; Ada's policy now holds it for her code.
    const approved = await asBob(a, 'approve_activity', { fingerprint: pending.body.activity.fingerprint })
    expect(statusOf(approved)).toBe(HELD)
    expect(await user.users()).toBe(before)
    const done = await user.submit(b, 'latchkey_satisfy_mfa', {
      fingerprint: pending.body.activity.fingerprint,
      totpCode: user.code(),
    })
    expect(statusOf(done)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await user.users()).toBe(before + 1)
  })

  it('one held on A whose submitter is taken out of the root quorum on B meanwhile fails with the right code', async () => {
    const { a, b } = pair
    const bob = testKey()
    const user = await account(a, undefined, { others: [bob] })
    const [, bobId] = user.userIds as [string, string]
    a.clock.advance(1)
    const held = await user.submit(a, 'create_users', newUser(testKey(), 'mallory'))
    expect(statusOf(held)).toBe(HELD)
    a.clock.advance(1)
    // Bob, under no MFA policy, changes the quorum at once.
    resultOf(
      'update_root_quorum',
      await b.submit(
        'update_root_quorum',
        { threshold: 1, userIds: [bobId] },
        { as: bob, organizationId: user.org },
      ),
    )
    const before = await user.users()
    const late = await user.submit(a, 'latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: user.code(),
    })
    expect(statusOf(late)).toBe('ACTIVITY_STATUS_FAILED')
    expect(late.body.activity.failure.message).toContain('no policy of organization')
    expect(await user.users()).toBe(before)
  })

  it('the same signed authority change sent to A and B at once, and again, is one activity, held once, run once', async () => {
    const { a, b } = pair
    const user = await account(a)
    const before = await user.users()
    a.clock.advance(1)
    const send = signed('create_users', newUser(testKey(), 'mallory'), {
      key: user.key,
      org: user.org,
      at: a.clock.now(),
    })
    const replies = await Promise.all([a, b, a, b].map((h) => send(h)))
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200])
    const id = replies[0]!.body.activity.id as string
    expect(replies.map((reply) => [reply.body.activity.id, statusOf(reply)])).toEqual(
      replies.map(() => [id, HELD]),
    )
    const { fingerprint } = replies[0]!.body.activity as { fingerprint: string }
    expect(
      (await a.service.store.findBy('activities', 'fingerprint', fingerprint)).map((row) => row.id),
    ).toEqual([id])
    expect((await b.service.store.get('mfaChallenges', id))?.userId).toBe(user.userId)
    expect(await user.users()).toBe(before)
    const done = await user.submit(b, 'latchkey_satisfy_mfa', { fingerprint, totpCode: user.code() })
    expect(statusOf(done)).toBe('ACTIVITY_STATUS_COMPLETED')
    // Replayed once more on both: the same activity, run once.
    for (const h of [a, b]) {
      const again = await send(h)
      expect([again.status, again.body.activity?.id, statusOf(again)]).toEqual([
        200,
        id,
        'ACTIVITY_STATUS_COMPLETED',
      ])
    }
    expect(await user.users()).toBe(before + 1)
  })
})

describe('lifting a spending guard under MFA, across two instances on PostgreSQL', {
  timeout: 120_000,
}, () => {
  it('a raise sent to A and B at once is one activity, held on both; its code proven on B runs it once, and a code on A then finds nothing waiting', async () => {
    const [a, b] = await twoInstances('mfa_guard')
    // A user with a policy on wallets only: the raise is held by the spending-guard rule alone.
    const user = await account(a)
    a.clock.advance(1)
    const { spendingLimitId } = resultOf(
      'latchkey_create_spending_limit',
      await user.submit(a, 'latchkey_create_spending_limit', {
        spendingLimitName: 'daily',
        scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId: user.userId },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
        amount: '1000',
      }),
    )
    a.clock.advance(1)
    const raise = { spendingLimitId, amount: '9000' }
    const replies = await Promise.all(
      [a, b].map((h) => user.submit(h, 'latchkey_update_spending_limit', raise)),
    )
    expect(replies.map((reply) => [reply.status, reply.body.activity.status])).toEqual([
      [200, 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'],
      [200, 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'],
    ])
    expect(replies[1]!.body.activity.id).toBe(replies[0]!.body.activity.id)
    const amount = async () => (await b.service.store.get('spendingLimits', spendingLimitId))?.amount
    expect(await amount()).toBe('1000')
    const { fingerprint } = replies[0]!.body.activity as { fingerprint: string }
    const done = await user.submit(b, 'latchkey_satisfy_mfa', { fingerprint, totpCode: user.code() })
    expect(done.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    const late = await user.submit(a, 'latchkey_satisfy_mfa', { fingerprint, totpCode: user.code() })
    expect([late.status, codeOf(late)]).toEqual([412, 'ACTIVITY_NOT_VOTABLE'])
    expect(await amount()).toBe('9000')
    for (const h of [a, b]) await h.service.close()
  })

  it("a session profile's widening sent to A and B at once is held once; a narrowing on B meanwhile runs at once; the code raced on A and B runs the widening once", async () => {
    const [a, b] = await twoInstances('mfa_profile')
    const user = await account(a)
    a.clock.advance(1)
    const { sessionProfileId } = resultOf(
      'create_session_profile',
      await user.submit(a, 'create_session_profile', {
        sessionProfileName: 'wallets only',
        scope: "activity.resource == 'WALLET'",
      }),
    )
    const scope = async () => (await b.service.store.get('sessionProfiles', sessionProfileId))?.scope
    a.clock.advance(1)
    // A stolen key widens the profile from both instances at once: one activity, held on both.
    const widen = { sessionProfileId, scope: 'true' }
    const replies = await Promise.all(
      [a, b].map((h) => user.submit(h, 'latchkey_update_session_profile', widen)),
    )
    expect(replies.map((reply) => [reply.status, reply.body.activity.status])).toEqual([
      [200, 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'],
      [200, 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'],
    ])
    expect(replies[1]!.body.activity.id).toBe(replies[0]!.body.activity.id)
    expect(await scope()).toBe("activity.resource == 'WALLET'")
    // The user's emergency narrowing on B is not held.
    const narrowed = await user.submit(
      b,
      'latchkey_update_session_profile',
      { sessionProfileId, scope: 'false' },
      user.key,
      1,
    )
    expect(narrowed.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await scope()).toBe('false')
    // Proven (the user chose to widen it after all) on A, and once only.
    const { fingerprint } = replies[0]!.body.activity as { fingerprint: string }
    const code = user.code()
    const proofs = await Promise.all(
      [a, b].map((h, i) =>
        user.submit(h, 'latchkey_satisfy_mfa', { fingerprint, totpCode: code }, user.key, i + 2),
      ),
    )
    expect(
      proofs.filter((reply) => reply.body.activity?.status === 'ACTIVITY_STATUS_COMPLETED'),
    ).toHaveLength(1)
    expect(await scope()).toBe('true')
    const runs = await a.service.store.findBy('activities', 'organizationId', user.org)
    expect(runs.filter((row) => row.type === 'ACTIVITY_TYPE_LATCHKEY_UPDATE_SESSION_PROFILE')).toHaveLength(2)
    for (const h of [a, b]) await h.service.close()
  })
})

describe("the service's SMS budget across two instances on PostgreSQL", { timeout: 120_000 }, () => {
  const pair = useTwoInstances('sms_budget', { postgres, options: { smsBudget: { maxPerHour: 5 } } })

  it("12 SMS codes to 12 new numbers at once, alternating instances, under 5 an hour: the new numbers' share (3) is sent, 9 refused; known numbers get the rest; the next hour frees it", async () => {
    const { a, b } = pair
    // Two users whose numbers the operator set (verified): what the attacker must not crowd out.
    const known = ['+14155559000', '+14155559001']
    resultOf(
      'create_sub_organization',
      await a.submit('create_sub_organization', {
        subOrganizationName: 'known numbers',
        rootUsers: known.map((userPhoneNumber, index) => ({
          userName: `User ${index}`,
          userPhoneNumber,
          apiKeys: [testKey().apiKey(`key ${index}`)],
          authenticators: [],
          oauthProviders: [],
        })),
        rootQuorumThreshold: 1,
      }),
    )
    const sms = (h: Harness, contact: string) => h.submit('init_otp', { otpType: 'OTP_TYPE_SMS', contact })
    const pumped = (n: number) => `+1415555${String(n).padStart(4, '0')}`
    const replies = await Promise.all(Array.from({ length: 12 }, (_, n) => sms(n % 2 ? b : a, pumped(n))))
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(3)
    const refused = replies.filter((reply) => reply.status !== 200)
    expect(refused.map((reply) => [reply.status, codeOf(reply), reply.body.details?.limit])).toEqual(
      Array(9).fill([429, 'OTP_RATE_LIMITED', 'smsPerHourNewNumbers']),
    )
    // The users' numbers still get codes, on either instance, up to the hour's whole bound.
    const [first, second] = await Promise.all([sms(a, known[0]!), sms(b, known[1]!)])
    expect([first.status, second.status]).toEqual([200, 200])
    // (A new request: the same body at the same instant would be the first one, replayed.)
    a.clock.advance(1)
    const over = await sms(a, known[0]!)
    expect([over.status, codeOf(over), over.body.details?.limit]).toEqual([
      429,
      'OTP_RATE_LIMITED',
      'smsPerHour',
    ])
    // Both instances share one clock here: the next clock hour starts the counts again.
    a.clock.advance(3_600_000 - (a.clock.now() % 3_600_000))
    expect((await sms(b, pumped(100))).status).toBe(200)
  })
})
