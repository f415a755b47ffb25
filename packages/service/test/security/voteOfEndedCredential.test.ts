// A vote counts only while the credential that cast it is there: a thief holding root 2's login
// session approves a waiting activity, root 2 logs the session out (or it expires), and root 3's
// approval must not complete the activity on the thief's vote. The vote stays in the record; its
// user may vote again with a credential they still hold.
import { describe, expect, it } from 'vitest'
import { createHarness, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { allowSignIns, raiseQuorum, vote as voteOn, waitingWallet } from './quorum.ts'
import { login } from './signIns.ts'

type Key = ReturnType<typeof testKey>

/** Three root users, threshold 3; root 2 holds a 60 s login session. Root 1's activity waits. */
async function quorumOfThree(h: Harness) {
  const sub = await h.createSubOrganization({ users: 3, threshold: 1 })
  const [k1, k2, k3] = sub.keys as [Key, Key, Key]
  const organizationId = sub.organizationId
  const session = await login(h, k2, organizationId, '60')
  await raiseQuorum(h, k1, organizationId, sub.userIds, 3)
  h.clock.advance(1)
  const pending = await h.submit(
    'create_api_keys',
    { userId: sub.userIds[0], apiKeys: [testKey().apiKey('r1 extra')] },
    { as: k1, organizationId },
  )
  expect(pending.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
  const sessionKeyId = (await h.service.store.findBy('apiKeys', 'userId', sub.userIds[1]!)).find(
    (key) => key.publicKey === session.publicKey,
  )!.id
  return {
    organizationId,
    userIds: sub.userIds,
    k1,
    k2,
    k3,
    session,
    sessionKeyId,
    activityId: pending.body.activity.id as string,
    fingerprint: pending.body.activity.fingerprint as string,
  }
}

type Setup = Awaited<ReturnType<typeof quorumOfThree>>

const vote = (h: Harness, s: Setup, as: Key, selection: 'approve' | 'reject' = 'approve') =>
  voteOn(h, as, s.organizationId, s.fingerprint, selection)

/**
 * Root 2 logs the session out: under the root quorum of three, its delete_api_keys waits for roots
 * 1 and 3 (their votes on it are not votes on the activity under test).
 */
async function logOut(h: Harness, s: Setup) {
  h.clock.advance(1)
  const asked = await h.submit(
    'delete_api_keys',
    { userId: s.userIds[1], apiKeyIds: [s.sessionKeyId] },
    { as: s.k2, organizationId: s.organizationId },
  )
  expect(asked.status, JSON.stringify(asked.body)).toBe(200)
  for (const as of [s.k1, s.k3]) {
    h.clock.advance(1)
    const approve = await h.submit(
      'approve_activity',
      { fingerprint: asked.body.activity.fingerprint },
      { as, organizationId: s.organizationId },
    )
    expect(approve.status, JSON.stringify(approve.body)).toBe(200)
  }
  expect(await h.service.store.get('apiKeys', s.sessionKeyId)).toBeUndefined()
}

const statusOf = async (h: Harness, s: Setup) =>
  (await h.service.store.get('activities', s.activityId))?.status

describe('a vote whose credential has ended', () => {
  it('does not count once the session that cast it is logged out, and stays in the record', async () => {
    const h = await createHarness()
    const s = await quorumOfThree(h)
    const stolen = await vote(h, s, s.session)
    expect(stolen.status, JSON.stringify(stolen.body)).toBe(200)
    expect(stolen.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    await logOut(h, s)
    const third = await vote(h, s, s.k3)
    expect(third.status, JSON.stringify(third.body)).toBe(200)
    expect(third.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    expect(await statusOf(h, s)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const votes = await h.service.store.findBy('votes', 'activityId', s.activityId)
    expect(votes.filter((row) => row.userId === s.userIds[1])).toHaveLength(1)
    // Root 1's new key was not made.
    const keys = await h.service.store.findBy('apiKeys', 'userId', s.userIds[0]!)
    expect(keys.some((key) => key.name === 'r1 extra')).toBe(false)
  })

  it('does not count once the session that cast it has expired', async () => {
    const h = await createHarness()
    const s = await quorumOfThree(h)
    expect((await vote(h, s, s.session)).status).toBe(200)
    h.clock.advance(120_000)
    const third = await vote(h, s, s.k3)
    expect(third.status, JSON.stringify(third.body)).toBe(200)
    expect(third.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
  })

  it('still counts while the session that cast it is alive', async () => {
    const h = await createHarness()
    const s = await quorumOfThree(h)
    expect((await vote(h, s, s.session)).status).toBe(200)
    const third = await vote(h, s, s.k3)
    expect(third.body.activity.status, JSON.stringify(third.body)).toBe('ACTIVITY_STATUS_COMPLETED')
  })

  it('still counts when cast by a durable key, however long the activity waits', async () => {
    const h = await createHarness()
    const s = await quorumOfThree(h)
    expect((await vote(h, s, s.k2)).status).toBe(200)
    h.clock.advance(120_000)
    // Root 2's session ending does not touch the vote root 2's durable key cast.
    await logOut(h, s)
    const third = await vote(h, s, s.k3)
    expect(third.body.activity.status, JSON.stringify(third.body)).toBe('ACTIVITY_STATUS_COMPLETED')
  })

  it('lets its user vote again with a credential they still hold: an approval then counts', async () => {
    const h = await createHarness()
    const s = await quorumOfThree(h)
    expect((await vote(h, s, s.session)).status).toBe(200)
    await logOut(h, s)
    expect((await vote(h, s, s.k3)).body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const again = await vote(h, s, s.k2)
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    expect(again.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    // Root 2's new vote takes the row of the one that ended: the record holds their latest vote.
    const votes = await h.service.store.findBy('votes', 'activityId', s.activityId)
    const theirs = votes.filter((row) => row.userId === s.userIds[1])
    expect(theirs).toHaveLength(1)
    expect(theirs[0]!.publicKey).toBe(s.k2.publicKey)
  })

  it('lets its user reject it once the session that approved is logged out', async () => {
    const h = await createHarness()
    const s = await quorumOfThree(h)
    expect((await vote(h, s, s.session)).status).toBe(200)
    await logOut(h, s)
    const reject = await vote(h, s, s.k2, 'reject')
    expect(reject.status, JSON.stringify(reject.body)).toBe(200)
    // With threshold 3 of 3, one rejection ends it.
    expect(reject.body.activity.status).toBe('ACTIVITY_STATUS_REJECTED')
  })

  it('still refuses a second vote while the first one counts (ALREADY_VOTED)', async () => {
    const h = await createHarness()
    const s = await quorumOfThree(h)
    expect((await vote(h, s, s.session)).status).toBe(200)
    const again = await vote(h, s, s.k2)
    expect(again.status).toBeGreaterThanOrEqual(400)
    expect(JSON.stringify(again.body)).toContain('ALREADY_VOTED')
    const reject = await vote(h, s, s.k2, 'reject')
    expect(JSON.stringify(reject.body)).toContain('ALREADY_VOTED')
    expect(await statusOf(h, s)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
  })

  it("does not count towards a policy's consensus once the session that cast it is logged out", async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({ users: 1, threshold: 1 })
    const root = sub.keys[0] as Key
    const organizationId = sub.organizationId
    const [u, v, w] = [testKey(), testKey(), testKey()]
    h.clock.advance(1)
    resultOf(
      'create_users',
      await h.submit(
        'create_users',
        {
          users: [u, v, w].map((key, i) => ({
            userName: `user ${i}`,
            apiKeys: [key.apiKey('durable')],
            authenticators: [],
            oauthProviders: [],
          })),
        },
        { as: root, organizationId },
      ),
    )
    h.clock.advance(1)
    resultOf(
      'create_policy',
      await h.submit(
        'create_policy',
        {
          policyName: 'three approve a wallet',
          effect: 'EFFECT_ALLOW',
          condition: "activity.type == 'ACTIVITY_TYPE_CREATE_WALLET'",
          consensus: 'approvers.count() >= 3',
        },
        { as: root, organizationId },
      ),
    )
    await allowSignIns(h, root, organizationId)
    const users = await h.service.store.findBy('users', 'organizationId', organizationId)
    const vId = users.find((user) => user.userName === 'user 1')!.id
    const session = await login(h, v, organizationId, '600')
    const pending = await waitingWallet(h, u, organizationId)
    const fingerprint = pending.body.activity.fingerprint as string
    const stolen = await voteOn(h, session, organizationId, fingerprint)
    expect(stolen.body.activity.status, JSON.stringify(stolen.body)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    // V, not a root user, logs the session out at once.
    const sessionKeyId = (await h.service.store.findBy('apiKeys', 'userId', vId)).find(
      (key) => key.publicKey === session.publicKey,
    )!.id
    h.clock.advance(1)
    const logout = await h.submit(
      'delete_api_keys',
      { userId: vId, apiKeyIds: [sessionKeyId] },
      { as: v, organizationId },
    )
    expect(logout.body.activity.status, JSON.stringify(logout.body)).toBe('ACTIVITY_STATUS_COMPLETED')
    const third = await voteOn(h, w, organizationId, fingerprint)
    expect(third.body.activity.status, JSON.stringify(third.body)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    // V approves again with the key V still holds: three approvers.
    const again = await voteOn(h, v, organizationId, fingerprint)
    expect(again.body.activity.status, JSON.stringify(again.body)).toBe('ACTIVITY_STATUS_COMPLETED')
  })

  it('is answered canApprove/canReject true by get_activity once it has ended, and the approval goes through', async () => {
    const h = await createHarness()
    const s = await quorumOfThree(h)
    expect((await vote(h, s, s.session)).status).toBe(200)
    const shown = async () => {
      const reply = await h.query(
        'get_activity',
        { organizationId: s.organizationId, activityId: s.activityId },
        { as: s.k2, organizationId: s.organizationId },
      )
      expect(reply.status, JSON.stringify(reply.body)).toBe(200)
      const { canApprove, canReject } = reply.body.activity
      return { canApprove, canReject }
    }
    // While the session's approval counts, root 2 may not vote again.
    expect(await shown()).toEqual({ canApprove: false, canReject: false })
    // The session expires: root 2's approval no longer counts.
    h.clock.advance(120_000)
    expect(await shown()).toEqual({ canApprove: true, canReject: true })
    expect((await vote(h, s, s.k3)).body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const again = await vote(h, s, s.k2)
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    expect(again.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
  })

  it('is answered canApprove false by get_activity while the durable key that cast it is there', async () => {
    const h = await createHarness()
    const s = await quorumOfThree(h)
    expect((await vote(h, s, s.k2)).status).toBe(200)
    h.clock.advance(120_000)
    const reply = await h.query(
      'get_activity',
      { organizationId: s.organizationId, activityId: s.activityId },
      { as: s.k2, organizationId: s.organizationId },
    )
    expect(reply.body.activity.canApprove).toBe(false)
    // Root 3 has not voted.
    const third = await h.query(
      'get_activity',
      { organizationId: s.organizationId, activityId: s.activityId },
      { as: s.k3, organizationId: s.organizationId },
    )
    expect(third.body.activity.canApprove).toBe(true)
  })
})
