// The reads of one vote do not grow with the organization's users and their credentials while the
// root quorum can still be met: the best case the policies could reach (every user who has not
// rejected approving with any credential) is built only once the quorum cannot be met any more.
// Nor with the approvals a user let end (sign in with a 1 s session, approve, wait, again): a new
// vote takes the row of the ended one, so an activity holds at most one vote per user.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createHarness, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { useTwoInstances } from '../support/twoInstances.ts'
import { allowSignIns, raiseQuorum, vote, waitingWallet, withReads } from './quorum.ts'
import { login } from './signIns.ts'

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
  await raiseQuorum(h, k1, organizationId, sub.userIds, 2)
  const pending = await waitingWallet(h, k1, organizationId)
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
  const { result: reply, reads } = await withReads(() =>
    vote(h, as, s.organizationId, s.fingerprint, selection),
  )
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

/**
 * Roots 1-3 (threshold 3), a plain user who may sign in (a policy allows stamp_login), and root 1's
 * create_wallet waiting for roots 2 and 3.
 */
async function withSigningInUser(h: Harness) {
  const sub = await h.createSubOrganization({ users: 3, threshold: 1 })
  const [k1, k2] = sub.keys as [Key, Key, Key]
  const organizationId = sub.organizationId
  const plain = testKey()
  h.clock.advance(1)
  const made = resultOf(
    'create_users',
    await h.submit(
      'create_users',
      {
        users: [
          { userName: 'plain', apiKeys: [plain.apiKey('durable')], authenticators: [], oauthProviders: [] },
        ],
      },
      { as: k1, organizationId },
    ),
  )
  await allowSignIns(h, k1, organizationId)
  await raiseQuorum(h, k1, organizationId, sub.userIds, 3)
  const pending = await waitingWallet(h, k1, organizationId)
  return {
    organizationId,
    k2,
    plain,
    plainUserId: (made as { userIds: string[] }).userIds[0]!,
    activityId: pending.body.activity.id as string,
    fingerprint: pending.body.activity.fingerprint as string,
  }
}

type SigningIn = Awaited<ReturnType<typeof withSigningInUser>>

/**
 * The plain user approves `rounds` times, each from a fresh 1 s login session that then expires
 * (their approval stops counting, so the next is accepted). The last session's key, still alive
 * when `alive`.
 */
async function approvalsThatEnd(h: Harness, s: SigningIn, rounds: number, alive = false): Promise<Key> {
  let session = testKey()
  for (let i = 0; i < rounds; i++) {
    session = await login(h, s.plain, s.organizationId, '1')
    const approval = await vote(h, session, s.organizationId, s.fingerprint)
    expect(approval.status, JSON.stringify(approval.body)).toBe(200)
    if (!alive || i < rounds - 1) h.clock.advance(2_000)
  }
  return session
}

describe('approvals of one user that keep ending', { timeout: 300_000 }, () => {
  it('leave one vote row for that user, holding their latest vote', async () => {
    const h = await createHarness()
    const s = await withSigningInUser(h)
    const last = await approvalsThatEnd(h, s, 30, true)
    const rows = await h.service.store.findBy('votes', 'activityId', s.activityId)
    const theirs = rows.filter((row) => row.userId === s.plainUserId)
    expect(theirs).toHaveLength(1)
    expect(theirs[0]!.publicKey).toBe(last.publicKey)
    expect(theirs[0]!.selection).toBe('VOTE_SELECTION_APPROVED')
    // The submitter's vote and the plain user's: at most one per user.
    expect(rows).toHaveLength(2)
    // Their latest approval still counts (its session is alive): a new one is refused.
    const again = await vote(h, s.plain, s.organizationId, s.fingerprint)
    expect(JSON.stringify(again.body)).toContain('ALREADY_VOTED')
  })

  it('leave one row for that user when they then reject: the rejection takes it', async () => {
    const h = await createHarness()
    const s = await withSigningInUser(h)
    await approvalsThatEnd(h, s, 5)
    const reject = await vote(h, s.plain, s.organizationId, s.fingerprint, 'reject')
    expect(reject.status, JSON.stringify(reject.body)).toBe(200)
    const theirs = (await h.service.store.findBy('votes', 'activityId', s.activityId)).filter(
      (row) => row.userId === s.plainUserId,
    )
    expect(theirs.map((row) => row.selection)).toEqual(['VOTE_SELECTION_REJECTED'])
  })

  it("do not make a root user's later vote read more", async () => {
    const reads = async (rounds: number) => {
      const h = await createHarness()
      const s = await withSigningInUser(h)
      await approvalsThatEnd(h, s, rounds)
      const { result: reply, reads: count } = await withReads(() =>
        vote(h, s.k2, s.organizationId, s.fingerprint),
      )
      expect(reply.status, JSON.stringify(reply.body)).toBe(200)
      expect(reply.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
      return count
    }
    const once = await reads(1)
    const often = await reads(30)
    expect(often).toBe(once)
  })
})

describe('a new vote over an approval that ended, on two instances of PostgreSQL', {
  timeout: 120_000,
}, () => {
  const pair = useTwoInstances('vote_replaces_ended')

  it('sent 8 times at once over A and B takes the ended row once: one row for the user, counted once', async () => {
    const { a, b } = pair
    const s = await withSigningInUser(a)
    await approvalsThatEnd(a, s, 1)
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        [a, b][i % 2]!.submit(
          'approve_activity',
          { fingerprint: s.fingerprint },
          { as: s.plain, organizationId: s.organizationId, timestampMs: String(a.clock.now() + 1 + i) },
        ),
      ),
    )
    expect(replies.filter((reply) => reply.status >= 500).map((reply) => reply.body)).toEqual([])
    expect(replies.filter((reply) => reply.status === 200).length).toBeGreaterThanOrEqual(1)
    for (const reply of replies.filter((r) => r.status !== 200))
      expect(JSON.stringify(reply.body)).toContain('ALREADY_VOTED')
    const theirs = (await a.service.store.findBy('votes', 'activityId', s.activityId)).filter(
      (row) => row.userId === s.plainUserId,
    )
    expect(theirs).toHaveLength(1)
    expect(theirs[0]!.publicKey).toBe(s.plain.publicKey)
    expect((await a.service.store.get('activities', s.activityId))?.status).toBe(
      'ACTIVITY_STATUS_CONSENSUS_NEEDED',
    )
  })
})
