// The reads of one vote do not grow with the organization's users and their credentials while the
// root quorum can still be met: the best case the policies could reach (every user who has not
// rejected approving with any credential) is built only once the quorum cannot be met any more.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Transaction } from '../../src/kernel/store/Transaction.ts'
import { createHarness, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'

type Key = ReturnType<typeof testKey>

/** Two root users (threshold 2), `extraUsers` more with `keysPerUser` keys each, a policy, and root 1's activity waiting. */
async function organizationWith(h: Harness, extraUsers: number, keysPerUser: number) {
  const sub = await h.createSubOrganization({ users: 2, threshold: 1 })
  const [k1] = sub.keys as [Key, Key]
  const organizationId = sub.organizationId
  const voters = [testKey(), testKey()]
  const pool = Array.from({ length: keysPerUser }, () => testKey())
  for (let made = 0; made < extraUsers; made += 100) {
    const users = Array.from({ length: Math.min(100, extraUsers - made) }, (_, i) => ({
      userName: `u${made + i}`,
      // The first two users vote with keys of their own; the others share a pool of keys.
      apiKeys: Array.from({ length: keysPerUser }, (_, j) =>
        (made === 0 && i < 2 && j === 0 ? voters[i]! : pool[j]!).apiKey(`k${j}`),
      ),
      authenticators: [],
      oauthProviders: [],
    }))
    h.clock.advance(1)
    resultOf('create_users', await h.submit('create_users', { users }, { as: k1, organizationId }))
  }
  h.clock.advance(1)
  resultOf(
    'create_policy',
    await h.submit(
      'create_policy',
      {
        policyName: 'unrelated',
        effect: 'EFFECT_ALLOW',
        condition: "activity.type == 'ACTIVITY_TYPE_EXPORT_WALLET'",
        consensus: 'approvers.count() > 1',
      },
      { as: k1, organizationId },
    ),
  )
  h.clock.advance(1)
  resultOf(
    'update_root_quorum',
    await h.submit('update_root_quorum', { threshold: 2, userIds: sub.userIds }, { as: k1, organizationId }),
  )
  h.clock.advance(1)
  const pending = await h.submit(
    'create_wallet',
    { walletName: 'w', accounts: [] },
    { as: k1, organizationId },
  )
  expect(pending.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
  return {
    organizationId,
    voters,
    k2: sub.keys[1] as Key,
    fingerprint: pending.body.activity.fingerprint as string,
  }
}

/** The reads (`get` and `findBy` in transactions) one vote makes. */
async function readsOfVote(
  h: Harness,
  s: Awaited<ReturnType<typeof organizationWith>>,
  as: Key,
  selection: 'approve' | 'reject',
  status = 'ACTIVITY_STATUS_CONSENSUS_NEEDED',
): Promise<number> {
  const get = vi.spyOn(Transaction.prototype, 'get')
  const findBy = vi.spyOn(Transaction.prototype, 'findBy')
  h.clock.advance(1)
  const reply = await h.submit(
    `${selection}_activity`,
    { fingerprint: s.fingerprint },
    {
      as,
      organizationId: s.organizationId,
    },
  )
  const reads = get.mock.calls.length + findBy.mock.calls.length
  get.mockRestore()
  findBy.mockRestore()
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  expect(reply.body.activity.status).toBe(status)
  return reads
}

afterEach(() => vi.restoreAllMocks())

describe('the reads of one vote', { timeout: 300_000 }, () => {
  it('while the root quorum can be met, are the same in an organization of 4 users and of 302 with 5 keys each', async () => {
    const small = createHarness()
    const few = await organizationWith(await small, 2, 1)
    const big = createHarness()
    const many = await organizationWith(await big, 300, 5)
    const counts = {
      approval: [
        await readsOfVote(await small, few, few.voters[0]!, 'approve'),
        await readsOfVote(await big, many, many.voters[0]!, 'approve'),
      ],
      rejection: [
        await readsOfVote(await small, few, few.voters[1]!, 'reject'),
        await readsOfVote(await big, many, many.voters[1]!, 'reject'),
      ],
    }
    // A few reads of slack for what differs besides the users (the voter's own keys).
    expect(counts.approval[1]).toBeLessThanOrEqual(counts.approval[0]! + 4)
    expect(counts.rejection[1]).toBeLessThanOrEqual(counts.rejection[0]! + 4)
  })

  it('once the quorum cannot be met, read each user once however many credentials they hold', async () => {
    const h = await createHarness()
    const users = 300
    const keys = 5
    const s = await organizationWith(h, users, keys)
    // Root 2 rejects: the quorum cannot be met; the policies are judged in their best case, every
    // user approving with every credential (no policy allows create_wallet: it is rejected).
    const reads = await readsOfVote(h, s, s.k2, 'reject', 'ACTIVITY_STATUS_REJECTED')
    // Per user: their keys and passkeys listed, the user read once, each key read once.
    expect(reads).toBeLessThanOrEqual(users * (3 + keys) + 100)
  })
})
