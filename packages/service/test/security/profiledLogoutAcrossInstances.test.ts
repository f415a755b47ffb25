// A session issued under a session profile signs itself out (`delete_api_keys` of its own key, the
// one credential activity its confinement lets through: limits/sessionProfiles.ts `isOwnLogout`)
// on instance A while it acts on instance B, on one PostgreSQL database: the logout is not held up
// by B's signing, B refuses what it admits after it (and a logout it admitted before, in its
// transaction), and two logouts of the same session at once end it once (one
// LATCHKEY_SESSION_REVOKED `logout`), the other a 401 naming the key, never a 500.
// limits/sessionProfiles.test.ts "signing out" has the one-instance cases.
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT, type Harness, type Reply, resultOf, testKey } from '../../src/testing/harness.ts'
import { unsignedTransfer } from '../../src/testing/unsignedTransfer.ts'
import { twoInstances, usePostgres } from '../support/twoInstances.ts'
import { refusal, submitRacing } from './inFlight.ts'

const postgres = usePostgres()

let nonce = 0
/** 1 wei to the dead address, a fresh nonce each (no replays). */
const unsigned = () => unsignedTransfer({ value: 1n, nonce: nonce++ })

/** Two instances with webhooks on (delivered nowhere: the events are read from the database). */
async function deployment(database: string): Promise<[Harness, Harness]> {
  const [a, b] = (await twoInstances(postgres.cluster, database, {
    webhooks: { transport: async () => ({ status: 200, body: '' }) },
    jobs: { pollMs: 3_600_000, backoff: { baseMs: 1000, maxMs: 60_000 } },
  })) as [Harness, Harness]
  resultOf(
    'create_webhook_endpoint',
    await a.submit('create_webhook_endpoint', {
      url: 'http://127.0.0.1:9/hook',
      name: 'app',
      subscriptions: [{ eventType: 'LATCHKEY_SESSION_REVOKED' }],
    }),
  )
  return [a, b]
}

/** The LATCHKEY_SESSION_REVOKED events recorded for `apiKeyId`, waiting or fanned out, as their `data`. */
async function revokedOf(h: Harness, apiKeyId: string): Promise<unknown[]> {
  const events = [
    ...(await h.service.store.all('webhookEvents')).map((event) => ({
      type: event.eventType,
      data: event.data,
    })),
    ...(await h.service.store.all('webhookDeliveries')).map((delivery) => {
      const body = JSON.parse(delivery.body) as { type: string; data: unknown }
      return { type: body.type, data: body.data }
    }),
  ]
  return events
    .filter((event) => event.type === 'LATCHKEY_SESSION_REVOKED')
    .map((event) => event.data)
    .filter((data) => (data as { apiKeyId: string }).apiKeyId === apiKeyId)
}

/** An owner with a wallet, and a one-hour session logged in on A under a profile that lets it sign with that wallet. */
async function profiledSession(a: Harness) {
  const sub = await a.createSubOrganization({
    wallet: { walletName: 'Agent', accounts: [ETHEREUM_ACCOUNT] },
  })
  const { organizationId } = sub
  const userId = sub.userIds[0]!
  const asOwner = { as: sub.keys[0]!, organizationId }
  a.clock.advance(1)
  const sessionProfileId = resultOf(
    'create_session_profile',
    await a.submit(
      'create_session_profile',
      { sessionProfileName: 'agent', scope: `activity.action == 'SIGN' && wallet.id == '${sub.walletId}'` },
      asOwner,
    ),
  ).sessionProfileId as string
  const key = testKey()
  a.clock.advance(1)
  resultOf(
    'stamp_login',
    await a.submit(
      'stamp_login',
      { publicKey: key.publicKey, expirationSeconds: '3600', sessionProfileId },
      asOwner,
    ),
  )
  const apiKeyId = (await a.service.store.findBy('apiKeys', 'userId', userId)).find(
    (row) => row.publicKey === key.publicKey,
  )!.id
  const as = { as: key, organizationId }
  /** Its logout on `h` (as every published client's logout sends it), as `submit`'s arguments. */
  const logoutRequest = (h: Harness): Parameters<Harness['submit']> => {
    h.clock.advance(1)
    return ['delete_api_keys', { userId, apiKeyIds: [apiKeyId] }, as]
  }
  /** A signature with the profile's wallet on `h` (within the scope), as `submit`'s arguments. */
  const signRequest = (h: Harness): Parameters<Harness['submit']> => {
    h.clock.advance(1)
    return [
      'sign_transaction',
      { signWith: sub.addresses![0]!, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned() },
      as,
    ]
  }
  const logout = (h: Harness) => h.submit(...logoutRequest(h))
  const sign = (h: Harness) => h.submit(...signRequest(h))
  /** Whether the session still reads on `h`. */
  const reads = async (h: Harness) => (await h.query('list_wallets', {}, as)).status
  return { organizationId, userId, apiKeyId, logout, sign, logoutRequest, signRequest, reads }
}

const loggedOut = (session: { userId: string; apiKeyId: string }) => ({
  userId: session.userId,
  apiKeyId: session.apiKeyId,
  reason: 'logout',
  activityId: expect.any(String),
})

/** A logout's answer: 200, or the refusal of a stamp by a key that is gone (never a 500). */
const outcomeOf = (reply: Reply) => (reply.status === 200 ? 200 : refusal(reply))

describe('a profiled session signing itself out on one instance while it acts on another', () => {
  it('ends it on A while B signs with it, and refuses on B a logout B let in before A’s committed', {
    timeout: 60_000,
  }, async () => {
    const [a, b] = await deployment('profiled_logout_in_flight')
    const session = await profiledSession(a)
    // Control: its scope holds on B, and it reads on both.
    expect((await session.sign(b)).status).toBe(200)
    expect([await session.reads(a), await session.reads(b)]).toEqual([200, 200])

    // Its logout commits on A between B's admission of a signature and that signature's
    // transaction. A signature runs on the snapshot read at its admission (docs/security.md, "Cannot
    // outrun a logout", its residual): it may still be made, as if sent a moment earlier; the
    // logout is not held up by it, and what B admits after it is refused.
    let onA: Reply | undefined
    const signed = await submitRacing(
      b,
      async () => {
        onA = await session.logout(a)
      },
      ...session.signRequest(b),
    )
    expect(onA?.status, JSON.stringify(onA?.body)).toBe(200)
    expect([[200], [401, 'PUBLIC_KEY_NOT_FOUND']]).toContainEqual(
      signed.status === 200 ? [200] : refusal(signed),
    )
    expect(refusal(await session.sign(b))).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect([await session.reads(a), await session.reads(b)]).toEqual([401, 401])
    expect(await revokedOf(b, session.apiKeyId)).toEqual([loggedOut(session)])

    // Another: its logout on B admitted, then its logout on A commits first.
    const second = await profiledSession(a)
    let secondOnA: Reply | undefined
    const secondOnB = await submitRacing(
      b,
      async () => {
        secondOnA = await second.logout(a)
      },
      ...second.logoutRequest(b),
    )
    expect([secondOnA?.status, outcomeOf(secondOnB)]).toEqual([200, [401, 'PUBLIC_KEY_NOT_FOUND']])
    expect([await second.reads(a), await second.reads(b)]).toEqual([401, 401])
    expect(await revokedOf(a, second.apiKeyId)).toEqual([loggedOut(second)])
    for (const h of [a, b]) await h.service.close()
  })

  it('ends a session logged out on A and B at once, and signing on B meanwhile, once', {
    timeout: 60_000,
  }, async () => {
    const [a, b] = await deployment('profiled_logout_race')
    for (let round = 0; round < 3; round++) {
      const session = await profiledSession(a)
      const replies = await Promise.all([
        session.logout(a),
        session.sign(b),
        session.logout(b),
        session.sign(b),
        session.logout(a),
      ])
      const [logouts, signs] = [
        [replies[0]!, replies[2]!, replies[4]!].map(outcomeOf),
        [replies[1]!, replies[3]!].map(outcomeOf),
      ]
      // One logout ends it; the others are refused as stamped by a key that is gone.
      expect(
        logouts.filter((outcome) => outcome === 200),
        JSON.stringify(logouts),
      ).toHaveLength(1)
      for (const outcome of [...logouts, ...signs])
        if (outcome !== 200) expect(outcome).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
      expect([await session.reads(a), await session.reads(b)]).toEqual([401, 401])
      expect(await revokedOf(a, session.apiKeyId)).toEqual([loggedOut(session)])
    }
    for (const h of [a, b]) await h.service.close()
  })
})
