import { describe, expect, it } from 'vitest'
import { createHarness, type Reply, resultOf, testKey } from '../testing/harness.ts'

const errorOf = (reply: Reply) => ({
  status: reply.status,
  errorCode: reply.body.details?.errorCode,
  field: reply.body.details?.field,
})

describe('update_root_quorum', () => {
  it('replaces the root users and threshold; a user taken out then needs a policy', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({ users: 2 })
    const [owner, backEnd] = sub.keys
    const as = (key = owner!) => ({ as: key, organizationId: sub.organizationId })
    const reply = await h.submit(
      'update_root_quorum',
      { threshold: 1, userIds: [sub.userIds[0]] },
      as(backEnd),
    )
    expect(reply.body.activity.type).toBe('ACTIVITY_TYPE_UPDATE_ROOT_QUORUM')
    expect(reply.body.activity.result).toEqual({ updateRootQuorumResult: {} })
    expect(await h.service.store.get('organizations', sub.organizationId)).toMatchObject({
      rootUserIds: [sub.userIds[0]],
      rootQuorumThreshold: 1,
    })
    // No longer root: creating a wallet needs a policy it does not have.
    const denied = await h.submit('create_wallet', { walletName: 'W', accounts: [] }, as(backEnd))
    expect(denied.status).toBe(403)
    resultOf('create_wallet', await h.submit('create_wallet', { walletName: 'W', accounts: [] }, as()))
  })

  it('refuses a threshold above the users, users of another organization and duplicates, naming the field', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    const as = { as: sub.keys[0]!, organizationId: sub.organizationId }
    const cases: [Record<string, unknown>, string, string][] = [
      [{ threshold: 2, userIds: [sub.userIds[0]] }, 'QUORUM_INVALID', 'parameters.threshold'],
      [{ threshold: 1, userIds: [] }, 'FIELD_REQUIRED', 'parameters.userIds'],
      [{ threshold: 1, userIds: [sub.userIds[0], sub.userIds[0]] }, 'FIELD_INVALID', 'parameters.userIds'],
      [{ threshold: 0, userIds: [sub.userIds[0]] }, 'FIELD_INVALID', 'parameters.threshold'],
    ]
    for (const [parameters, errorCode, field] of cases) {
      h.clock.advance(1)
      expect(errorOf(await h.submit('update_root_quorum', parameters, as))).toMatchObject({
        errorCode,
        field,
      })
    }
    const other = await h.createSubOrganization({ keys: [testKey()] })
    expect(
      errorOf(await h.submit('update_root_quorum', { threshold: 1, userIds: [other.userIds[0]] }, as)),
    ).toMatchObject({ errorCode: 'USER_NOT_FOUND', field: 'parameters.userIds[0]' })
  })
})
