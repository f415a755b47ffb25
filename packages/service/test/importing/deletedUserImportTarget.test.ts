import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'

/**
 * A pending import's target (`init_import_wallet`: a sealed P-256 private key for one user) goes
 * with its user: `delete_users` deletes a non-root user's, and `delete_sub_organization` every
 * user's, root or not. Another user's target stays until its user goes.
 */

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

async function setUp() {
  const h = await createHarness()
  harnesses.push(h)
  const sub = await h.createSubOrganization()
  const as = { as: sub.keys[0]!, organizationId: sub.organizationId }
  const users = (names: string[]) =>
    names.map((userName) => ({
      userName,
      apiKeys: [testKey().apiKey()],
      authenticators: [],
      oauthProviders: [],
      userTags: [],
    }))
  const userIds = resultOf('create_users', await h.submit('create_users', { users: users(['a', 'b']) }, as))
    .userIds as string[]
  const rootId = sub.userIds[0]!
  for (const userId of [...userIds, rootId])
    resultOf('init_import_wallet', await h.submit('init_import_wallet', { userId }, as))
  const targets = (userId: string) => h.service.store.findBy('importTargets', 'userId', userId)
  for (const userId of [...userIds, rootId]) expect(await targets(userId)).toHaveLength(1)
  return { h, sub, as, userIds, rootId, targets }
}

describe('a deleted user’s pending import target', () => {
  it('delete_users deletes it; the other users’ stay', async () => {
    const { h, as, userIds, rootId, targets } = await setUp()
    const [gone, kept] = userIds as [string, string]
    resultOf('delete_users', await h.submit('delete_users', { userIds: [gone] }, as))
    expect(await h.service.store.get('users', gone)).toBeUndefined()
    expect(await targets(gone)).toEqual([])
    expect(await targets(kept)).toHaveLength(1)
    expect(await targets(rootId)).toHaveLength(1)
  }, 60_000)

  it('delete_sub_organization deletes every user’s, non-root and root', async () => {
    const { h, sub, as, userIds, rootId, targets } = await setUp()
    resultOf(
      'delete_sub_organization',
      await h.submit('delete_sub_organization', { deleteWithoutExport: true }, as),
    )
    expect(await h.service.store.get('organizations', sub.organizationId)).toBeUndefined()
    for (const userId of [...userIds, rootId]) expect(await targets(userId)).toEqual([])
  }, 60_000)
})
