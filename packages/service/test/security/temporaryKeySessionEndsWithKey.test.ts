// A session opened by an API key with a lifetime (`create_api_keys` `expirationSeconds`) ends no
// later than that key (domain/sessions.ts `issueSession`, `secondsLeftOfOpeners`): a login asking
// for longer gets what is left of the key's life, in whole seconds; one asking for less keeps what
// it asked. Its renewals and a session under a profile it issues carry the key as their origin and
// are cut the same. Before, stamp_login with a one-minute key asking 30 days gave a session that
// still created wallets a day later (test/audit_sessions/temporaryKeySessionOutlivesKey.test.ts),
// while a read-only session made with such a key already expired with it.
import { describe, expect, it } from 'vitest'
import { decodeJwtClaims } from '../../src/kernel/crypto/jwt.ts'
import {
  createHarness,
  type Harness,
  type Reply,
  resultOf,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'

const codeOf = (reply: Reply) => [reply.status, reply.body?.details?.errorCode]

/** A sub-organization whose user has a registered key living `expirationSeconds` (none: lifelong). */
async function withKey(expirationSeconds?: string) {
  const h = await createHarness()
  const sub = await h.createSubOrganization({ name: 'temporary key' })
  const organizationId = sub.organizationId
  const opener = testKey()
  h.clock.advance(1)
  resultOf(
    'create_api_keys',
    await h.submit(
      'create_api_keys',
      {
        userId: sub.userIds[0],
        apiKeys: [{ ...opener.apiKey('opener'), ...(expirationSeconds ? { expirationSeconds } : {}) }],
      },
      { as: sub.keys[0]!, organizationId },
    ),
  )
  const row = (await h.service.store.findBy('apiKeys', 'publicKey', opener.publicKey))[0]!
  /** When the opener expires (epoch ms), when it has a lifetime. */
  const keyEnd = row.createdAt + Number(row.expirationSeconds ?? Number.NaN) * 1000
  return { h, organizationId, owner: sub.keys[0]!, opener, keyEnd }
}

/** `stamp_login` of a new session key, stamped by `by`, and the session key's row and JWT expiry. */
async function login(h: Harness, organizationId: string, by: TestKey, parameters: Record<string, unknown>) {
  const key = testKey()
  h.clock.advance(1)
  const reply = await h.submit(
    'stamp_login',
    { publicKey: key.publicKey, ...parameters },
    { as: by, organizationId },
  )
  const row = (await h.service.store.findBy('apiKeys', 'publicKey', key.publicKey))[0]
  return {
    reply,
    key,
    /** When the session key expires (epoch ms), as the service refuses it. */
    end: row ? row.createdAt + Number(row.expirationSeconds) * 1000 : undefined,
    expirationSeconds: row?.expirationSeconds,
    jwtExp:
      reply.status === 200
        ? decodeJwtClaims<{ exp: number }>(reply.body.activity.result.stampLoginResult.session).exp
        : undefined,
  }
}

/** The session's list_wallets at `at` (epoch ms): its status and code. */
async function readsAt(h: Harness, organizationId: string, key: TestKey, at: number) {
  h.clock.set(at)
  return codeOf(await h.query('list_wallets', {}, { as: key, organizationId }))
}

describe('a session opened by a key with a lifetime', () => {
  it("asked past the key's expiry, ends with the key; asked shorter, keeps what it asked", async () => {
    const { h, organizationId, opener, keyEnd } = await withKey('3600')
    h.clock.set(keyEnd - 3600_000 + 1000)
    const long = await login(h, organizationId, opener, { expirationSeconds: '2592000' })
    expect(long.reply.status).toBe(200)
    // What was left of the key's hour, in whole seconds: it ends at the key's end, not after.
    expect(long.end).toBeLessThanOrEqual(keyEnd)
    expect(long.end).toBeGreaterThan(keyEnd - 1000)
    expect(long.jwtExp! * 1000).toBeLessThanOrEqual(keyEnd)
    const short = await login(h, organizationId, opener, { expirationSeconds: '600' })
    expect(short.expirationSeconds).toBe('600')
    const shortEnd = short.end!

    expect(await readsAt(h, organizationId, short.key, shortEnd - 1)).toEqual([200, undefined])
    expect(await readsAt(h, organizationId, short.key, shortEnd)).toEqual([401, 'API_KEY_EXPIRED'])
    expect(await readsAt(h, organizationId, long.key, long.end! - 1)).toEqual([200, undefined])
    expect(await readsAt(h, organizationId, long.key, long.end!)).toEqual([401, 'API_KEY_EXPIRED'])
    // The key itself is refused from its end, and so is the session a day later.
    expect(await readsAt(h, organizationId, opener, keyEnd)).toEqual([401, 'API_KEY_EXPIRED'])
    h.clock.set(keyEnd + 24 * 3600_000)
    expect(
      codeOf(
        await h.submit(
          'create_wallet',
          { walletName: 'late', accounts: [] },
          { as: long.key, organizationId },
        ),
      ),
    ).toEqual([401, 'API_KEY_EXPIRED'])
  })

  it('the audit case: a one-minute key asking 30 days gets at most the minute', async () => {
    const { h, organizationId, opener, keyEnd } = await withKey('60')
    const session = await login(h, organizationId, opener, { expirationSeconds: '2592000' })
    expect(session.reply.status).toBe(200)
    expect(session.end).toBeLessThanOrEqual(keyEnd)
    h.clock.set(keyEnd + 24 * 3600_000)
    expect(
      codeOf(
        await h.submit(
          'create_wallet',
          { walletName: 'by session', accounts: [] },
          { as: session.key, organizationId },
        ),
      ),
    ).toEqual([401, 'API_KEY_EXPIRED'])
  })

  it('its renewals, and a session under a profile it issues, end with the key too', async () => {
    const { h, organizationId, owner, opener, keyEnd } = await withKey('3600')
    h.clock.advance(1)
    const sessionProfileId = resultOf(
      'create_session_profile',
      await h.submit(
        'create_session_profile',
        { sessionProfileName: 'month', scope: 'true', expirationSeconds: '2592000' },
        { as: owner, organizationId },
      ),
    ).sessionProfileId as string
    const first = await login(h, organizationId, opener, { expirationSeconds: '2400' })
    expect(first.expirationSeconds).toBe('2400')
    // Halfway through the key's hour: the session renews itself asking 30 days.
    h.clock.set(keyEnd - 1800_000)
    const renewal = await login(h, organizationId, first.key, { expirationSeconds: '2592000' })
    expect(renewal.reply.status).toBe(200)
    expect(renewal.end).toBeLessThanOrEqual(keyEnd)
    expect(renewal.end).toBeGreaterThan(keyEnd - 1000)
    // A profile of 30 days, for a session the renewal issues, and one the key issues.
    for (const by of [renewal.key, opener]) {
      const confined = await login(h, organizationId, by, { sessionProfileId })
      expect(confined.reply.status).toBe(200)
      expect(confined.end).toBeLessThanOrEqual(keyEnd)
      expect(await readsAt(h, organizationId, confined.key, confined.end! - 1)).toEqual([200, undefined])
      expect(await readsAt(h, organizationId, confined.key, keyEnd)).toEqual([401, 'API_KEY_EXPIRED'])
      h.clock.set(keyEnd - 1800_000 + 10)
    }
  })

  it('a key in the last second of its life opens no session: 401, nothing registered', async () => {
    const { h, organizationId, opener, keyEnd } = await withKey('60')
    h.clock.set(keyEnd - 500)
    const late = await login(h, organizationId, opener, { expirationSeconds: '600' })
    expect(codeOf(late.reply)).toEqual([401, 'SESSION_EXPIRED'])
    expect(late.end).toBeUndefined()
  })

  it('a lifelong key opens the session the login asks for, up to 30 days', async () => {
    const { h, organizationId, opener } = await withKey()
    const month = await login(h, organizationId, opener, { expirationSeconds: '2592000' })
    expect(month.expirationSeconds).toBe('2592000')
  })
})
