import { ACTIVITIES, type ActivityPath } from '@latchkey/protocol'
import { base32nopad } from '@scure/base'
import { beforeEach, describe, expect, it } from 'vitest'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Json,
  resultOf,
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
