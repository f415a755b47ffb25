import { describe, expect, it } from 'vitest'
import { createHarness, resultOf, testKey } from '../testing/harness.ts'

const ALLOW_SIGN = {
  policyName: 'Back end may sign',
  effect: 'EFFECT_ALLOW',
  condition: "activity.resource == 'WALLET' && activity.action == 'SIGN'",
  notes: 'delegated access',
}

describe('policy activities and queries', () => {
  it('creates, reads, lists, updates and deletes policies', async () => {
    const h = await createHarness()
    const created = await h.submit('create_policy', ALLOW_SIGN)
    expect(created.body.activity).toMatchObject({
      type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
      status: 'ACTIVITY_STATUS_COMPLETED',
      intent: { createPolicyIntentV3: ALLOW_SIGN },
    })
    const { policyId } = resultOf('create_policy', created)
    expect(created.body.activity.result).toEqual({ createPolicyResult: { policyId } })

    const got = await h.query('get_policy', { policyId })
    expect(got.status).toBe(200)
    expect(got.body.policy).toEqual({
      policyId,
      policyName: ALLOW_SIGN.policyName,
      effect: 'EFFECT_ALLOW',
      condition: ALLOW_SIGN.condition,
      consensus: '',
      notes: 'delegated access',
      createdAt: expect.objectContaining({ seconds: expect.any(String) }),
      updatedAt: expect.objectContaining({ seconds: expect.any(String) }),
    })

    const many = await h.submit('create_policies', {
      policies: [
        {
          policyName: 'Deny exports',
          effect: 'EFFECT_DENY',
          condition: "activity.action == 'EXPORT'",
          notes: '',
        },
        { policyName: 'Two admins', effect: 'EFFECT_ALLOW', consensus: 'approvers.count() >= 2', notes: '' },
      ],
    })
    expect(many.body.activity.type).toBe('ACTIVITY_TYPE_CREATE_POLICIES')
    const { policyIds } = resultOf('create_policies', many)
    expect(policyIds).toHaveLength(2)
    const listed = await h.query('list_policies')
    expect(listed.body.policies.map((p: { policyName: string }) => p.policyName)).toEqual([
      'Back end may sign',
      'Deny exports',
      'Two admins',
    ])

    const updated = await h.submit('update_policy', {
      policyId,
      policyName: 'Renamed',
      policyEffect: 'EFFECT_DENY',
      policyConsensus: 'approvers.count() >= 1',
    })
    expect(updated.body.activity).toMatchObject({
      type: 'ACTIVITY_TYPE_UPDATE_POLICY_V2',
      result: { updatePolicyResultV2: { policyId } },
    })
    expect((await h.query('get_policy', { policyId })).body.policy).toMatchObject({
      policyName: 'Renamed',
      effect: 'EFFECT_DENY',
      condition: ALLOW_SIGN.condition,
      consensus: 'approvers.count() >= 1',
      notes: 'delegated access',
    })
    // '' clears an expression.
    resultOf('update_policy', await h.submit('update_policy', { policyId, policyCondition: '' }))
    expect((await h.query('get_policy', { policyId })).body.policy.condition).toBe('')

    expect(resultOf('delete_policy', await h.submit('delete_policy', { policyId }))).toEqual({ policyId })
    expect(await h.query('get_policy', { policyId })).toMatchObject({
      status: 404,
      body: { details: { errorCode: 'POLICY_NOT_FOUND', field: 'policyId' } },
    })
    expect(resultOf('delete_policies', await h.submit('delete_policies', { policyIds }))).toEqual({
      policyIds,
    })
    expect((await h.query('list_policies')).body.policies).toEqual([])
  })

  it('refuses a syntax error at create and update with the field and position', async () => {
    const h = await createHarness()
    const bad = await h.submit('create_policy', { ...ALLOW_SIGN, condition: "activity.type == 'x' &&" })
    expect(bad).toMatchObject({
      status: 400,
      body: {
        message: 'parameters.condition: unexpected end of expression at position 23',
        details: { errorCode: 'FIELD_INVALID', field: 'parameters.condition', position: 23 },
      },
    })
    const badConsensus = await h.submit('create_policy', { ...ALLOW_SIGN, consensus: 'activity.type == 1' })
    expect(badConsensus.body.details).toMatchObject({ field: 'parameters.consensus', position: 0 })
    expect(badConsensus.body.message).toContain("unknown keyword 'activity'")
    const inBatch = await h.submit('create_policies', {
      policies: [ALLOW_SIGN, { ...ALLOW_SIGN, policyName: 'b', condition: 'eth.tx.to = 1' }],
    })
    expect(inBatch.body.details).toMatchObject({ field: 'parameters.policies[1].condition', position: 10 })
    const deep = await h.submit('create_policy', {
      ...ALLOW_SIGN,
      condition: `${'('.repeat(40)}true${')'.repeat(40)}`,
    })
    expect(deep.body.message).toContain('nests deeper than 32 levels')
    const long = await h.submit('create_policy', { ...ALLOW_SIGN, condition: 'true && '.repeat(600) })
    expect(long.body.details.field).toBe('parameters.condition')
    const effect = await h.submit('create_policy', { ...ALLOW_SIGN, effect: 'EFFECT_MAYBE' })
    expect(effect.body.details).toMatchObject({ errorCode: 'ENUM_INVALID', field: 'parameters.effect' })

    const { policyId } = resultOf('create_policy', await h.submit('create_policy', ALLOW_SIGN))
    const badUpdate = await h.submit('update_policy', { policyId, policyCondition: '!' })
    expect(badUpdate.body.details).toMatchObject({ field: 'parameters.policyCondition', position: 1 })
    h.clock.advance(1) // the same body again would be a replay of the first request
    expect((await h.submit('create_policy', ALLOW_SIGN)).body.details).toMatchObject({
      errorCode: 'ALREADY_EXISTS',
      field: 'parameters.policyName',
    })
    expect((await h.submit('delete_policy', { policyId: 'nope' })).body.details).toMatchObject({
      errorCode: 'POLICY_NOT_FOUND',
      field: 'parameters.policyId',
    })
    // Nothing of the refused batch was stored.
    expect((await h.query('list_policies')).body.policies).toHaveLength(1)
  })

  it('keeps policies to their organization', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    const { policyId } = resultOf(
      'create_policy',
      await h.submit('create_policy', ALLOW_SIGN, { as: sub.keys[0], organizationId: sub.organizationId }),
    )
    expect((await h.query('list_policies')).body.policies).toEqual([])
    expect((await h.query('get_policy', { policyId })).status).toBe(404)
    expect((await h.submit('delete_policy', { policyId })).status).toBe(404)
    const own = await h.query('list_policies', {}, { as: sub.keys[0], organizationId: sub.organizationId })
    expect(own.body.policies.map((p: { policyId: string }) => p.policyId)).toEqual([policyId])
  })
})

describe('create_users and delete_users', () => {
  it('adds non-root users with API keys and tags, and deletes them with their keys', async () => {
    const h = await createHarness()
    const tag = resultOf(
      'create_user_tag',
      await h.submit('create_user_tag', { userTagName: 'backend', userIds: [] }),
    )
    const key = testKey()
    const reply = await h.submit('create_users', {
      users: [
        {
          userName: 'App back end',
          userEmail: 'Backend@Example.com',
          apiKeys: [key.apiKey('server')],
          authenticators: [],
          oauthProviders: [],
          userTags: [tag.userTagId],
        },
      ],
    })
    expect(reply.body.activity).toMatchObject({
      type: 'ACTIVITY_TYPE_CREATE_USERS_V3',
      intent: { createUsersIntentV3: { users: [expect.objectContaining({ userName: 'App back end' })] } },
    })
    const { userIds } = resultOf('create_users', reply)
    const user = (await h.query('get_user', { userId: userIds[0] })).body.user
    expect(user).toMatchObject({
      userName: 'App back end',
      userEmail: 'backend@example.com',
      userTags: [tag.userTagId],
      apiKeys: [
        expect.objectContaining({
          apiKeyName: 'server',
          credential: expect.objectContaining({ publicKey: key.publicKey }),
        }),
      ],
    })
    // The new key authenticates (whoami is a read), but is not a root user.
    expect((await h.query('whoami', {}, { as: key })).body.userId).toBe(userIds[0])
    const organization = await h.query('whoami')
    expect(organization.body.userId).not.toBe(userIds[0])

    expect(
      (
        await h.submit('create_users', {
          users: [{ userName: 'x', apiKeys: [], authenticators: [], oauthProviders: [], userTags: ['nope'] }],
        })
      ).body.details,
    ).toMatchObject({
      errorCode: 'USER_TAG_NOT_FOUND',
      field: 'parameters.users[0].userTags[0]',
    })
    expect((await h.submit('create_users', { users: [] })).body.details.field).toBe('parameters.users')

    const rootId = organization.body.userId
    expect((await h.submit('delete_users', { userIds: [rootId] })).body.details).toMatchObject({
      errorCode: 'PERMISSION_DENIED',
      field: 'parameters.userIds[0]',
    })
    expect(resultOf('delete_users', await h.submit('delete_users', { userIds }))).toEqual({ userIds })
    expect((await h.query('get_user', { userId: userIds[0] })).status).toBe(404)
    expect((await h.query('whoami', {}, { as: key })).status).toBe(401)
    const tags = (await h.query('list_user_tags')).body.userTags
    expect(tags.find((t: { userTagId: string }) => t.userTagId === tag.userTagId).userIds).toEqual([])
  })
})
