// The MFA wing's "only once" rules and its attempt budget across two service instances on one
// PostgreSQL database: a second instance must be no second chance. A held activity runs once
// however many approvals race on both; a TOTP code and a recovery code are each accepted once;
// a user's code attempts are counted on both together (the store's shared rate-limit buckets); a
// user's caps (5 TOTP factors, 20 MFA policies) hold when creates race on both.
import { base32nopad } from '@scure/base'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { totp } from '../../src/mfa/totp.ts'
import { ETHEREUM_ACCOUNT, type Harness, resultOf, type TestKey, testKey } from '../../src/testing/harness.ts'
import { latestCode } from '../../src/testing/latestCode.ts'
import { twoInstances as twoOnPostgres } from '../support/twoInstances.ts'

let cluster: PostgresCluster

beforeAll(async () => {
  cluster = await startPostgres()
}, 600_000)

afterAll(async () => {
  await cluster?.dispose()
}, 60_000)

const twoInstances = (database: string) => twoOnPostgres(cluster, database)

const codeOf = (reply: { body: { errorCode?: string; details?: { errorCode?: string } } }) =>
  reply.body.errorCode ?? reply.body.details?.errorCode

/** A sub-organization (made on A) whose root user enrolled TOTP and has a policy on wallet creation. */
async function account(a: Harness, steps?: unknown) {
  const key = testKey()
  const sub = await a.createSubOrganization({ keys: [key] })
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
  resultOf(
    'create_mfa_policy',
    await submit(a, 'create_mfa_policy', {
      userId,
      mfaPolicyName: 'wallets',
      condition: "activity.resource == 'WALLET'",
      requiredAuthenticationMethods: steps ?? [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
      order: 0,
    }),
  )
  const held = async (h: Harness, name: string) => {
    h.clock.advance(1)
    const reply = await submit(h, 'create_wallet', { walletName: name, accounts: [ETHEREUM_ACCOUNT] })
    expect(reply.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    return reply.body.activity.fingerprint as string
  }
  const wallets = async (h: Harness) =>
    (await h.query('list_wallets', { organizationId: org }, { as: key, organizationId: org })).body.wallets
      .length
  return { key, org, userId, secret, submit, held, wallets }
}

describe('MFA across two instances on PostgreSQL', { timeout: 120_000 }, () => {
  let a: Harness
  let b: Harness

  beforeAll(async () => {
    ;[a, b] = await twoInstances('mfa_instances')
  }, 120_000)

  afterAll(async () => {
    await a?.service.close()
    await b?.service.close()
  })

  it('code attempts are counted on both instances together: the budget spent on A and B refuses a right code', async () => {
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

  it("a policy needing the e-mail and the e-mail's removal, raced on A and B: one wins, never both", async () => {
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

  it('at most 5 TOTP factors and 20 MFA policies a user: creates raced over both make exactly what fits', async () => {
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
