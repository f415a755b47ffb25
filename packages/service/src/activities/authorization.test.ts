import { describe, expect, it } from 'vitest'
import { apiKeyInOrganization } from '../kernel/store/model.ts'
import { createHarness, ETHEREUM_ACCOUNT, testKey } from '../testing/harness.ts'

describe('authorisation', () => {
  it('lets the parent organization create and read sub-organizations but never act in them', async () => {
    const h = await createHarness()
    const key = testKey()
    const sub = await h.createSubOrganization({
      keys: [key],
      wallet: { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] },
    })
    // Parent reads.
    const users = await h.query('list_users', {}, { organizationId: sub.organizationId })
    expect(users.status).toBe(200)
    expect(users.body.users.map((user: { userId: string }) => user.userId)).toEqual(sub.userIds)
    // Parent never signs, exports or creates wallets in the sub-organization.
    for (const [path, parameters] of [
      [
        'sign_raw_payloads',
        {
          signWith: sub.addresses![0],
          payloads: ['00'.repeat(32)],
          encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
          hashFunction: 'HASH_FUNCTION_NO_OP',
        },
      ],
      ['export_wallet', { walletId: sub.walletId, targetPublicKey: key.publicKey }],
      ['create_wallet', { walletName: 'x', accounts: [] }],
    ] as const) {
      const reply = await h.submit(path, parameters, { organizationId: sub.organizationId })
      expect(reply).toMatchObject({
        status: 403,
        body: { code: 7, details: { errorCode: 'PERMISSION_DENIED', field: 'organizationId' } },
      })
    }
    // The sub-organization's own key does it.
    expect(
      (
        await h.submit(
          'create_wallet',
          { walletName: 'x', accounts: [] },
          { as: key, organizationId: sub.organizationId },
        )
      ).status,
    ).toBe(200)
  })

  it('confines a key to its own organization', async () => {
    const h = await createHarness()
    const a = await h.createSubOrganization()
    const b = await h.createSubOrganization()
    const asA = { as: a.keys[0]! }
    expect((await h.query('list_users', {}, { ...asA, organizationId: b.organizationId })).status).toBe(403)
    expect((await h.query('list_users', {}, { ...asA })).status).toBe(403) // the parent
    expect(
      (
        await h.submit(
          'create_wallet',
          { walletName: 'x', accounts: [] },
          { ...asA, organizationId: b.organizationId },
        )
      ).status,
    ).toBe(403)
    expect((await h.submit('create_wallet', { walletName: 'x', accounts: [] }, { ...asA })).status).toBe(403)
    expect(await h.query('list_users', {}, { ...asA, organizationId: 'nope' })).toMatchObject({
      status: 404,
      body: { details: { errorCode: 'ORGANIZATION_NOT_FOUND', field: 'organizationId' } },
    })
  })

  it('refuses sub-sub-organizations', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    const reply = await h.submit(
      'create_sub_organization',
      {
        subOrganizationName: 'Nested',
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: 'n', apiKeys: [], authenticators: [], oauthProviders: [] }],
      },
      { as: sub.keys[0]!, organizationId: sub.organizationId },
    )
    expect(reply).toMatchObject({ status: 403, body: { details: { errorCode: 'PERMISSION_DENIED' } } })
  })

  it('denies non-root users and records OUTCOME_DENY_IMPLICIT', async () => {
    const h = await createHarness()
    const member = testKey()
    const now = h.clock.now()
    await h.service.store.transaction(async (tx) => {
      await tx.put('users', {
        id: 'member-user',
        organizationId: h.organizationId,
        userName: 'Member',
        createdAt: now,
        updatedAt: now,
      })
      await tx.put('apiKeys', {
        id: 'member-key',
        organizationId: h.organizationId,
        userId: 'member-user',
        name: 'member',
        publicKey: member.publicKey,
        keyInOrganization: apiKeyInOrganization(member.publicKey, h.organizationId),
        curve: 'API_KEY_CURVE_P256',
        credentialType: 'CREDENTIAL_TYPE_API_KEY_P256',
        createdAt: now,
        updatedAt: now,
      })
    })
    const reply = await h.submit('create_wallet', { walletName: 'x', accounts: [] }, { as: member })
    expect(reply).toMatchObject({ status: 403, body: { details: { errorCode: 'PERMISSION_DENIED' } } })
    const activity = (await h.service.store.all('activities')).at(-1)!
    expect(activity.status).toBe('ACTIVITY_STATUS_FAILED')
    const evaluations = await h.query('get_policy_evaluations', { activityId: activity.id })
    expect(evaluations.body.policyEvaluations).toEqual([
      expect.objectContaining({
        activityId: activity.id,
        policyEvaluations: [{ outcome: 'OUTCOME_DENY_IMPLICIT' }],
      }),
    ])
    // Members still read their organization.
    expect((await h.query('list_wallets', {}, { as: member })).status).toBe(200)
    expect(await h.service.store.all('wallets')).toEqual([])
  })

  it('answers an exact replay with the activity it already created', async () => {
    const h = await createHarness()
    const body = JSON.stringify({
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      timestampMs: String(h.clock.now()),
      organizationId: h.organizationId,
      parameters: { walletName: 'Once', accounts: [] },
    })
    const [header, value] = h.root.stamp(body)
    const first = await h.post('/public/v1/submit/create_wallet', body, { [header]: value })
    const second = await h.post('/public/v1/submit/create_wallet', body, { [header]: value })
    expect(second.body.activity.id).toBe(first.body.activity.id)
    expect(await h.service.store.all('wallets')).toHaveLength(1)
  })
})

describe('root quorum consensus', () => {
  it('waits for approvals, then executes as the submitter', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({ users: 3, threshold: 2 })
    const [k1, k2, k3] = sub.keys as [
      Awaited<ReturnType<typeof testKey>>,
      Awaited<ReturnType<typeof testKey>>,
      Awaited<ReturnType<typeof testKey>>,
    ]
    const at = { organizationId: sub.organizationId }
    const submitted = await h.submit(
      'create_wallet',
      { walletName: 'Shared', accounts: [ETHEREUM_ACCOUNT] },
      { ...at, as: k1 },
    )
    expect(submitted.status).toBe(200)
    const pending = submitted.body.activity
    const approveAs = (as: typeof k1) =>
      h.submit('approve_activity', { fingerprint: pending.fingerprint }, { ...at, as })
    expect(pending).toMatchObject({
      status: 'ACTIVITY_STATUS_CONSENSUS_NEEDED',
      result: {},
      canApprove: false,
      canReject: false,
      votes: [
        expect.objectContaining({
          userId: sub.userIds[0],
          selection: 'VOTE_SELECTION_APPROVED',
          publicKey: k1.publicKey,
        }),
      ],
    })
    expect(await h.service.store.all('wallets')).toEqual([])
    const seen = await h.query('get_activity', { activityId: pending.id }, { ...at, as: k2 })
    expect(seen.body.activity).toMatchObject({ canApprove: true, canReject: true })
    expect(
      (await h.query('get_policy_evaluations', { activityId: pending.id }, { ...at, as: k2 })).body
        .policyEvaluations,
    ).toEqual([
      expect.objectContaining({
        policyEvaluations: [{ outcome: 'OUTCOME_REQUIRES_CONSENSUS' }],
        voteId: pending.votes[0].id,
      }),
    ])

    const again = await approveAs(k1)
    expect(again).toMatchObject({ status: 412, body: { details: { errorCode: 'ALREADY_VOTED' } } })

    const approved = await approveAs(k2)
    expect(approved.status).toBe(200)
    expect(approved.body.activity).toMatchObject({
      id: pending.id,
      status: 'ACTIVITY_STATUS_COMPLETED',
      canApprove: false,
      result: {
        createWalletResult: { walletId: expect.any(String), addresses: [expect.stringMatching(/^0x/)] },
      },
    })
    expect(approved.body.activity.votes).toHaveLength(2)
    expect(await h.service.store.all('wallets')).toHaveLength(1)
    // The same request again (a client's retry) is a replay: it answers as the first did, with the
    // activity it approved, and nothing runs twice.
    const replayed = await approveAs(k2)
    expect(replayed.status).toBe(200)
    expect(replayed.body.activity).toMatchObject({
      id: pending.id,
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      status: 'ACTIVITY_STATUS_COMPLETED',
      result: approved.body.activity.result,
    })
    expect(await h.service.store.all('wallets')).toHaveLength(1)
    const late = await approveAs(k3)
    expect(late).toMatchObject({ status: 412, body: { details: { errorCode: 'ACTIVITY_NOT_VOTABLE' } } })
    const outcomes = (
      await h.query('get_policy_evaluations', { activityId: pending.id }, at)
    ).body.policyEvaluations.map(
      (evaluation: { policyEvaluations: { outcome: string }[] }) => evaluation.policyEvaluations[0]!.outcome,
    )
    expect(outcomes).toEqual(['OUTCOME_REQUIRES_CONSENSUS', 'OUTCOME_ALLOW'])
  })

  it('rejects once approval can no longer reach the threshold', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({ users: 3, threshold: 2 })
    const [k1, k2, k3] = sub.keys
    const at = { organizationId: sub.organizationId }
    const pending = (await h.submit('create_wallet', { walletName: 'No', accounts: [] }, { ...at, as: k1! }))
      .body.activity
    const first = await h.submit('reject_activity', { fingerprint: pending.fingerprint }, { ...at, as: k2! })
    expect(first.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const second = await h.submit('reject_activity', { fingerprint: pending.fingerprint }, { ...at, as: k3! })
    expect(second.body.activity).toMatchObject({
      status: 'ACTIVITY_STATUS_REJECTED',
      canApprove: false,
      canReject: false,
    })
    expect(await h.service.store.all('wallets')).toEqual([])
    const evaluations = (await h.query('get_policy_evaluations', { activityId: pending.id }, at)).body
      .policyEvaluations
    expect(evaluations.at(-1).policyEvaluations).toEqual([{ outcome: 'OUTCOME_REJECTED' }])
  })

  it('records an approved activity that fails as FAILED, changing nothing', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({ users: 2, threshold: 2 })
    const at = { organizationId: sub.organizationId }
    const pending = (
      await h.submit('update_user_name', { userId: 'missing', userName: 'x' }, { ...at, as: sub.keys[0]! })
    ).body.activity
    const approved = await h.submit(
      'approve_activity',
      { fingerprint: pending.fingerprint },
      { ...at, as: sub.keys[1]! },
    )
    expect(approved.body.activity).toMatchObject({
      status: 'ACTIVITY_STATUS_FAILED',
      failure: { code: 5, details: { errorCode: 'USER_NOT_FOUND', field: 'parameters.userId' } },
    })
    const unknown = await h.submit(
      'approve_activity',
      { fingerprint: 'ff'.repeat(32) },
      { ...at, as: sub.keys[1]! },
    )
    expect(unknown).toMatchObject({ status: 404, body: { details: { errorCode: 'ACTIVITY_NOT_FOUND' } } })
  })
})
