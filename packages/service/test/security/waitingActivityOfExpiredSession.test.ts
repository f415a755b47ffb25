// A waiting activity (root quorum) submitted by a login session key, approved by another root user
// after the key expired, fails 401 API_KEY_EXPIRED as a new request from the key would
// (`submitterNow`): before, it ran as the expired key and minted a durable key (create_api_keys) or
// a new session (stamp_login) from a session that was over.
import { describe, expect, it } from 'vitest'
import { createHarness, type Harness, testKey } from '../../src/testing/harness.ts'
import { raiseQuorum } from './quorum.ts'
import { login } from './signIns.ts'

/** Two root users, threshold 2; user 1 holds a 60 s login session key. */
async function quorumWithSession(h: Harness) {
  const sub = await h.createSubOrganization({ users: 2, threshold: 1 })
  const [k1, k2] = sub.keys as [ReturnType<typeof testKey>, ReturnType<typeof testKey>]
  const organizationId = sub.organizationId
  const session = await login(h, k1, organizationId, '60')
  await raiseQuorum(h, k1, organizationId, sub.userIds, 2)
  return { organizationId, userIds: sub.userIds, k1, k2, session }
}

async function submitKeyCreation(h: Harness, s: Awaited<ReturnType<typeof quorumWithSession>>) {
  const durable = testKey()
  h.clock.advance(1)
  const pending = await h.submit(
    'create_api_keys',
    { userId: s.userIds[0], apiKeys: [durable.apiKey('thief durable')] },
    { as: s.session, organizationId: s.organizationId },
  )
  expect(pending.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
  return { durable, fingerprint: pending.body.activity.fingerprint as string }
}

describe('a waiting activity of a session key that has since expired', () => {
  it('control: approved while the session lives, it runs', async () => {
    const h = await createHarness()
    const s = await quorumWithSession(h)
    const { fingerprint } = await submitKeyCreation(h, s)
    h.clock.advance(1)
    const approved = await h.submit(
      'approve_activity',
      { fingerprint },
      { as: s.k2, organizationId: s.organizationId },
    )
    expect(approved.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
  })

  it('does not run as the expired key when approved after its expiry', async () => {
    const h = await createHarness()
    const s = await quorumWithSession(h)
    const { durable, fingerprint } = await submitKeyCreation(h, s)
    h.clock.advance(120_000)
    // Control: the session itself is over for a new request.
    const direct = await h.submit(
      'create_wallet',
      { walletName: 'late', accounts: [] },
      { as: s.session, organizationId: s.organizationId },
    )
    expect(direct.status).toBe(401)
    const approved = await h.submit(
      'approve_activity',
      { fingerprint },
      { as: s.k2, organizationId: s.organizationId },
    )
    expect(approved.status).toBe(200)
    const keys = await h.service.store.findBy('apiKeys', 'userId', s.userIds[0]!)
    // The expired session's activity fails as a new request from it would.
    expect(approved.body.activity.status).toBe('ACTIVITY_STATUS_FAILED')
    expect(JSON.stringify(approved.body.activity.failure)).toContain('API_KEY_EXPIRED')
    expect(keys.some((k) => k.publicKey === durable.publicKey)).toBe(false)
  })

  it('renews no expired session: a waiting stamp_login approved after its expiry opens none', async () => {
    const h = await createHarness()
    const s = await quorumWithSession(h)
    const next = testKey()
    h.clock.advance(1)
    const pending = await h.submit(
      'stamp_login',
      { publicKey: next.publicKey, expirationSeconds: '86400' },
      { as: s.session, organizationId: s.organizationId },
    )
    expect(pending.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    h.clock.advance(120_000)
    const approved = await h.submit(
      'approve_activity',
      { fingerprint: pending.body.activity.fingerprint },
      { as: s.k2, organizationId: s.organizationId },
    )
    expect(approved.status).toBe(200)
    h.clock.advance(1)
    const acts = await h.submit(
      'create_wallet',
      { walletName: 'renewed', accounts: [] },
      { as: next, organizationId: s.organizationId },
    )
    // The expired session renewed nothing (its stamp_login failed), so the new key is unknown.
    expect(approved.body.activity.status).toBe('ACTIVITY_STATUS_FAILED')
    expect(acts.status).toBe(401)
  })
})
