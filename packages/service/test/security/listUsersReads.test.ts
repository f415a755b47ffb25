// `list_users` rendered each user with its own reads, and read every tag of the organization again
// for each user (`tag.userIds.includes`): an end user who filled their own sub-organization within
// its caps (users, tags of 100 ids) made one listing cost users × tags on the event loop, and three
// of them held every other organization's requests for seconds on an in-process store (the noisy
// neighbour audit: 1,000 users and 100 tags, a victim's `whoami` 2.5 s instead of 11 ms). The
// organization's passkeys, API keys, tags and OAuth providers are now read once a listing; what it
// shows of each user is what `get_user` shows.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createHarness, fillRows, type Harness, testKey } from '../../src/testing/harness.ts'

const harnesses: Harness[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

const PER_USER = new Set(['authenticators', 'apiKeys', 'userTags', 'oauthProviders'])

/** A sub-organization with `users` users (two with API keys) and `tags` tags of 10 of them each. */
async function organizationOf(users: number, tags: number) {
  const h = await createHarness()
  harnesses.push(h)
  const key = testKey()
  const sub = await h.createSubOrganization({ keys: [key] })
  const as = { organizationId: sub.organizationId, as: key }
  await fillRows(h, 'users', users, (i) => ({ organizationId: sub.organizationId, userName: `u${i}` }))
  const ids = Array.from({ length: users }, (_, i) => `filler-users-${String(i).padStart(6, '0')}`)
  await fillRows(h, 'userTags', tags, (i) => ({
    organizationId: sub.organizationId,
    name: `tag${i}`,
    userIds: Array.from({ length: 10 }, (_, j) => ids[(i * 7 + j) % users]!),
  }))
  const made = await h.submit(
    'create_users',
    {
      users: [0, 1].map((n) => ({
        userName: `keyed ${n}`,
        apiKeys: [{ apiKeyName: `k${n}`, publicKey: testKey().publicKey, curveType: 'API_KEY_CURVE_P256' }],
        authenticators: [],
        oauthProviders: [],
        userTags: [],
      })),
    },
    as,
  )
  expect(made.status).toBe(200)
  return { h, as }
}

/** How many per-user reads (passkeys, API keys, tags, OAuth providers) one `list_users` makes. */
async function perUserReads({ h, as }: Awaited<ReturnType<typeof organizationOf>>) {
  const findBy = vi.spyOn(h.service.store, 'findBy')
  const listed = await h.query('list_users', {}, as)
  const reads = findBy.mock.calls.filter(([table]) => PER_USER.has(table)).length
  findBy.mockRestore()
  expect(listed.status).toBe(200)
  return { reads, users: listed.body.users as { userId: string; userTags: string[]; apiKeys: unknown[] }[] }
}

describe('list_users', () => {
  it("reads each kind of a user's rows once for the organization, however many users it has", async () => {
    const small = await perUserReads(await organizationOf(10, 5))
    const large = await perUserReads(await organizationOf(300, 100))
    expect(large.users).toHaveLength(300 + 3)
    expect(large.reads).toBe(small.reads)
  })

  it('shows each user as get_user does: tags, API keys, passkeys, OAuth providers', async () => {
    const org = await organizationOf(40, 12)
    const { users } = await perUserReads(org)
    expect(users.some((user) => user.userTags.length > 1)).toBe(true)
    expect(users.filter((user) => user.apiKeys.length > 0).length).toBeGreaterThanOrEqual(3)
    for (const user of users) {
      const one = await org.h.query('get_user', { userId: user.userId }, org.as)
      expect(one.status).toBe(200)
      expect(user).toEqual(one.body.user)
    }
  })
})
