// A session logged out on instance A while instance B runs requests stamped by its key, on one
// PostgreSQL database. B let them in while the key existed; each activity's transaction reads the
// key again (SERIALIZABLE, from the database: no instance keeps a copy), so one that runs after
// the logout's commit is refused, and what one that ran before it made ends with the key (a
// read-only session is bound to it). See logoutDuringRequest.test.ts for one instance.
import { describe, expect, it } from 'vitest'
import { type Harness, type Reply, resultOf, testKey } from '../../src/testing/harness.ts'
import { twoInstances, usePostgres } from '../support/twoInstances.ts'
import { lists, readOnly, refusal, signedIn, submitRacing } from './inFlight.ts'

const postgres = usePostgres()

describe('a logout on one instance while another runs the session’s requests', () => {
  it('refuses on B what B let in before the logout on A committed', { timeout: 60_000 }, async () => {
    const [a, b] = (await twoInstances(postgres.cluster, 'logout_in_flight')) as [Harness, Harness]
    const { organizationId, session, logout } = await signedIn(a)
    // Control: B knows the session.
    expect(await lists(b, session, organizationId)).toBe(200)

    // The logout commits on A between B's admission of each request and its transaction.
    b.clock.advance(1)
    const next = testKey()
    const login = await submitRacing(
      b,
      logout,
      'stamp_login',
      { publicKey: next.publicKey },
      {
        as: session,
        organizationId,
      },
    )
    expect(refusal(login)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect([await lists(a, next, organizationId), await lists(b, next, organizationId)]).toEqual([401, 401])

    // A second session, logged out the same way while B adds a key with it.
    const second = await signedIn(a)
    b.clock.advance(1)
    const planted = testKey()
    const added = await submitRacing(
      b,
      second.logout,
      'create_api_keys',
      { userId: second.userId, apiKeys: [planted.apiKey('planted')] },
      { as: second.session, organizationId: second.organizationId },
    )
    expect(refusal(added)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect(await lists(a, planted, second.organizationId)).toBe(401)

    // A read-only session asked for on B: refused, or bound to the key and ended with it.
    const third = await signedIn(a)
    b.clock.advance(1)
    const reply = await submitRacing(
      b,
      third.logout,
      'create_read_only_session',
      {},
      {
        as: third.session,
        organizationId: third.organizationId,
      },
    )
    if (reply.status === 200) {
      const token = readOnly(resultOf('create_read_only_session', reply).session)
      expect([
        await lists(a, token, third.organizationId),
        await lists(b, token, third.organizationId),
      ]).toEqual([401, 401])
    } else expect(refusal(reply)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
  })

  it('leaves no read-only session reading after a logout on A that B’s requests raced', {
    timeout: 60_000,
  }, async () => {
    const [a, b] = (await twoInstances(postgres.cluster, 'logout_race')) as [Harness, Harness]
    const { organizationId, session, logout } = await signedIn(a)
    const askOnB = () => {
      b.clock.advance(1)
      return b.submit('create_read_only_session', {}, { as: session, organizationId })
    }
    // Control: two made before the logout read on both instances.
    const before = [await askOnB(), await askOnB()].map(
      (reply) => resultOf('create_read_only_session', reply).session as string,
    )
    for (const token of before)
      expect([
        await lists(a, readOnly(token), organizationId),
        await lists(b, readOnly(token), organizationId),
      ]).toEqual([200, 200])
    // The race: more asked for on B, and logins by the key (their transactions read the key the
    // logout deletes and rerun when they conflict with it: a rerun answers with the refusal, never
    // an error of the database), while A logs the session out.
    const made: Promise<Reply>[] = []
    const logins: Promise<Reply>[] = []
    let signedOut: Promise<void> | undefined
    for (let i = 0; i < 12; i++) {
      made.push(askOnB())
      if (i % 3 === 0)
        logins.push(
          b.submit('stamp_login', { publicKey: testKey().publicKey }, { as: session, organizationId }),
        )
      if (i === 3) signedOut = logout()
    }
    const replies = await Promise.all(made)
    await signedOut
    for (const login of await Promise.all(logins))
      if (login.status !== 200)
        expect(refusal(login), JSON.stringify(login.body)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    const tokens = [...before]
    for (const reply of replies)
      if (reply.status === 200) tokens.push(resultOf('create_read_only_session', reply).session)
      else expect(refusal(reply), JSON.stringify(reply.body)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    a.clock.advance(30 * 60_000)
    const reading: string[] = []
    for (const [index, token] of tokens.entries())
      for (const [name, h] of [
        ['A', a],
        ['B', b],
      ] as const)
        if ((await lists(h, readOnly(token), organizationId)) === 200) reading.push(`${index} on ${name}`)
    expect(reading).toEqual([])
  })
})
