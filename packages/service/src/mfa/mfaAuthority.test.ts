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
import { AUTHORITY_CHANGES } from './mfaGate.ts'
import { totp } from './totp.ts'

/**
 * What a stolen credential of a user under an MFA policy must not get around (review): giving
 * authority to someone else (a user it holds the key of, a root seat, a policy), running an
 * activity parked before its submitter lost the right to it, and a policy its user cannot prove.
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

const submitAs = (key: TestKey, path: Parameters<Harness['submit']>[0], params: Json) => {
  h.clock.advance(1)
  return h.submit(path, params, { as: key, organizationId: org })
}

const TOTP_STEP = [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }]
const WALLETS = "activity.resource == 'WALLET' && activity.action == 'CREATE'"

/** A confirmed TOTP factor and a wallet-creation policy on the key's user; a code maker for later. */
async function totpPolicyOn(key: TestKey, userId: string) {
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
  const mfaPolicyId = resultOf(
    'create_mfa_policy',
    await submitAs(key, 'create_mfa_policy', {
      userId,
      mfaPolicyName: 'p',
      order: 0,
      condition: WALLETS,
      requiredAuthenticationMethods: TOTP_STEP,
    }),
  ).mfaPolicyId as string
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

async function walletCount() {
  const reply = await h.query('list_wallets', { organizationId: org }, { as: keyA, organizationId: org })
  return (reply.body.wallets as unknown[]).length
}

describe('changes to who else may act wait for every policy of a submitter under MFA', () => {
  it('the always-held authority changes are real activity paths', () => {
    for (const path of AUTHORITY_CHANGES) expect(ACTIVITIES[path as ActivityPath], path).toBeDefined()
  })

  it('a stolen credential cannot make a second root user and act through it without MFA', async () => {
    await totpPolicyOn(keyA, userA)
    const attacker = testKey()
    const created = await submitAs(keyA, 'create_users', newUser(attacker))
    expect(status(created)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    // The attacker's key was not added: it cannot act.
    expect((await submitAs(attacker, 'create_wallet', wallet('w1'))).status).toBe(401)
    expect(await walletCount()).toBe(0)
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
    expect(await walletCount()).toBe(0)
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
    expect(await walletCount()).toBe(0)
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
    expect(await walletCount()).toBe(0)
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
    expect(await walletCount()).toBe(0)
  })

  it('one awaiting consensus whose credential was deleted meanwhile fails when the quorum approves it', async () => {
    resultOf(
      'update_root_quorum',
      await submitAs(keyB, 'update_root_quorum', { threshold: 2, userIds: [userA, userB] }),
    )
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
    expect(await walletCount()).toBe(0)
  })

  it('one that waited for consensus, then for a code, still runs with the approvals it gathered', async () => {
    const { code } = await totpPolicyOn(keyA, userA)
    resultOf(
      'update_root_quorum',
      await submitAs(keyB, 'update_root_quorum', { threshold: 2, userIds: [userA, userB] }),
    )
    const held = await submitAs(keyA, 'create_wallet', wallet('two of two'))
    expect(status(held)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const voted = await submitAs(keyB, 'approve_activity', { fingerprint: held.body.activity.fingerprint })
    expect(status(voted)).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const done = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(status(done)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await walletCount()).toBe(1)
  })
})
