import { testKey } from '@latchkey/service/testing'
import { beforeEach, describe, expect, it } from 'vitest'
import { type ClientFixture, createClientFixture } from '../../test/fixtures.ts'
import { getPolicies } from '../queries/getPolicies.ts'
import { getPolicy } from '../queries/getPolicy.ts'
import { getUsers } from '../queries/getUsers.ts'
import { createPolicies } from './createPolicies.ts'
import { createPolicy } from './createPolicy.ts'
import { createUsers } from './createUsers.ts'
import { deletePolicies } from './deletePolicies.ts'
import { deletePolicy } from './deletePolicy.ts'
import { deleteUsers } from './deleteUsers.ts'
import { updatePolicy } from './updatePolicy.ts'

describe('policy and user actions against the local service', () => {
  let fx: ClientFixture
  beforeEach(async () => {
    fx = await createClientFixture()
    await fx.signUpDirect()
  })

  it('creates, reads, updates and deletes policies', async () => {
    const { policyId } = await createPolicy(fx.client, {
      policyName: 'Back end signs transfers to X',
      effect: 'EFFECT_ALLOW',
      condition: "activity.action == 'SIGN' && eth.tx.to == '0x0000000000000000000000000000000000000001'",
      notes: '',
    })
    expect((await getPolicy(fx.client, { policyId })).policy).toMatchObject({
      policyId,
      effect: 'EFFECT_ALLOW',
      consensus: '',
    })
    const { policyIds } = await createPolicies(fx.client, {
      policies: [
        {
          policyName: 'No exports',
          effect: 'EFFECT_DENY',
          condition: "activity.action == 'EXPORT'",
          notes: '',
        },
      ],
    })
    await updatePolicy(fx.client, { policyId, policyNotes: 'reviewed' })
    expect((await getPolicies(fx.client)).policies.map((p) => [p.policyName, p.notes])).toEqual([
      ['Back end signs transfers to X', 'reviewed'],
      ['No exports', ''],
    ])
    await expect(
      createPolicy(fx.client, {
        policyName: 'bad',
        effect: 'EFFECT_ALLOW',
        condition: 'eth.tx.to ==',
        notes: '',
      }),
    ).rejects.toMatchObject({
      code: 'FIELD_INVALID',
      details: { field: 'parameters.condition', position: 12 },
    })
    await deletePolicy(fx.client, { policyId })
    await deletePolicies(fx.client, { policyIds })
    expect((await getPolicies(fx.client)).policies).toEqual([])
  })

  it('adds and removes a back-end user with an API key', async () => {
    const key = testKey()
    const { userIds } = await createUsers(fx.client, {
      users: [
        {
          userName: 'Back end',
          apiKeys: [key.apiKey('server')],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    })
    expect((await getUsers(fx.client, {})).users.map((u) => u.userName)).toContain('Back end')
    await deleteUsers(fx.client, { userIds })
    expect((await getUsers(fx.client, {})).users.map((u) => u.userName)).not.toContain('Back end')
  })
})
