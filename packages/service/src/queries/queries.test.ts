import { describe, expect, it } from 'vitest'
import { createHarness, ETHEREUM_ACCOUNT, resultOf } from '../testing/harness.ts'

describe('queries and lookups that miss', () => {
  it('answer 404 naming the field', async () => {
    const h = await createHarness()
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['get_activity', { activityId: 'nope' }, 'activityId', 'ACTIVITY_NOT_FOUND'],
      ['get_policy_evaluations', { activityId: 'nope' }, 'activityId', 'ACTIVITY_NOT_FOUND'],
      ['get_api_keys', { userId: 'nope' }, 'userId', 'USER_NOT_FOUND'],
      ['get_user', { userId: 'nope' }, 'userId', 'USER_NOT_FOUND'],
      ['get_wallet', { walletId: 'nope' }, 'walletId', 'WALLET_NOT_FOUND'],
      ['list_wallet_accounts', { walletId: 'nope' }, 'walletId', 'WALLET_NOT_FOUND'],
      ['get_authenticator', { authenticatorId: 'nope' }, 'authenticatorId', 'AUTHENTICATOR_NOT_FOUND'],
    ]
    for (const [path, body, field, errorCode] of cases) {
      const reply = await h.query(path, body)
      expect({ path, status: reply.status, details: reply.body.details }).toEqual({
        path,
        status: 404,
        details: { errorCode, field },
      })
    }
    expect((await h.query('get_activity', {})).body.details).toEqual({
      errorCode: 'FIELD_REQUIRED',
      field: 'activityId',
    })
    const exported = await h.submit('export_wallet_account', { address: '0xabc', targetPublicKey: '04' })
    expect(exported).toMatchObject({
      status: 404,
      body: { details: { errorCode: 'WALLET_ACCOUNT_NOT_FOUND', field: 'parameters.address' } },
    })
  })

  it('read an activity, its evaluations and the organization data from the parent', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({ wallet: { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] } })
    const at = { organizationId: sub.organizationId }
    const activity = (
      await h.submit(
        'create_user_tag',
        { userTagName: 't', userIds: sub.userIds },
        { ...at, as: sub.keys[0]! },
      )
    ).body.activity
    const read = await h.query('get_activity', { activityId: activity.id }, at)
    expect(read.body.activity).toEqual(activity)
    expect(
      (await h.query('get_policy_evaluations', { activityId: activity.id }, at)).body.policyEvaluations,
    ).toEqual([
      {
        id: expect.any(String),
        activityId: activity.id,
        organizationId: sub.organizationId,
        voteId: '',
        policyEvaluations: [{ outcome: 'OUTCOME_ALLOW' }],
        createdAt: { seconds: String(h.clock.now() / 1000), nanos: '0' },
      },
    ])
    expect((await h.query('list_wallets', {}, at)).body.wallets).toHaveLength(1)
    expect((await h.query('get_api_keys', {}, at)).body.apiKeys).toEqual([
      expect.objectContaining({
        credential: { publicKey: sub.keys[0]!.publicKey, type: 'CREDENTIAL_TYPE_API_KEY_P256' },
      }),
    ])
    expect((await h.query('list_user_tags', {}, at)).body.userTags).toEqual([
      expect.objectContaining({ userTagName: 't', userIds: sub.userIds }),
    ])
    const account = (await h.query('list_wallet_accounts', { walletId: sub.walletId }, at)).body.accounts[0]
    expect(account).toMatchObject({
      address: sub.addresses![0],
      organizationId: sub.organizationId,
      curve: 'CURVE_SECP256K1',
    })
    expect(
      resultOf('create_wallet', await h.submit('create_wallet', { walletName: 'P', accounts: [] })).walletId,
    ).toEqual(expect.any(String))
  })
})
