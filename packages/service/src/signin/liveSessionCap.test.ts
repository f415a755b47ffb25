// A user holds at most MAX_LIVE_SESSIONS_PER_USER live login sessions: a login past it ends the
// oldest. Each login adds a key row that lives up to 30 days, and a login sweeps only keys expired
// for a while, so an end user logging in again and again grew their key rows (and every scan of
// them) by the rate limit alone.
import { describe, expect, it } from 'vitest'
import { MAX_LIVE_SESSIONS_PER_USER } from '../domain/sessions.ts'
import { createHarness, resultOf, testKey } from '../testing/harness.ts'

describe('live login sessions a user holds', () => {
  it('a login past the cap ends the oldest sessions, the expired ones first', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    const userId = sub.userIds[0]!
    const as = { as: sub.keys[0]!, organizationId: sub.organizationId }
    const MONTH = 30 * 24 * 3600
    // 150 sessions as 150 logins would leave them (written directly: fast), the first 10 expired
    // a minute ago, the rest live, oldest first.
    const start = h.clock.now()
    await h.service.store.transaction(async (tx) => {
      for (let i = 0; i < 150; i++)
        await tx.put('apiKeys', {
          id: `session-${String(i).padStart(3, '0')}`,
          organizationId: sub.organizationId,
          userId,
          name: `session ${i}`,
          publicKey: `02${String(i).padStart(64, '0')}`,
          keyInOrganization: `02${String(i).padStart(64, '0')}@${sub.organizationId}`,
          curve: 'API_KEY_CURVE_P256',
          credentialType: 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256',
          expirationSeconds: String(i < 10 ? 60 : MONTH),
          createdAt: start + i,
          updatedAt: start + i,
        })
    })
    h.clock.advance(120_000)
    const sessionKey = testKey()
    resultOf('stamp_login', await h.submit('stamp_login', { publicKey: sessionKey.publicKey }, as))
    const keys = await h.service.store.findBy('apiKeys', 'userId', userId)
    const sessions = keys.filter(
      (key) => key.credentialType === 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256',
    )
    expect(sessions).toHaveLength(MAX_LIVE_SESSIONS_PER_USER)
    // The 10 expired went first, then the 41 oldest live ones; the newest 99 and the new one stay.
    const ids = sessions
      .map((key) => key.id)
      .filter((id) => id.startsWith('session-'))
      .sort()
    expect(ids).toHaveLength(99)
    expect(ids[0]).toBe('session-051')
    expect(sessions.some((key) => key.publicKey === sessionKey.publicKey)).toBe(true)
    // The durable key is not a session: it stays, and signs.
    expect(keys.some((key) => key.publicKey === sub.keys[0]!.publicKey)).toBe(true)
    // The new session works.
    expect(
      (await h.query('list_wallets', { organizationId: sub.organizationId }, { as: sessionKey })).status,
    ).toBe(200)
  })
})
