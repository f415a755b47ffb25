// A shared account: a sub-organization of several root users under a root quorum above 1. A root
// user's logout (its session deleting its own key, as the kit's and the published clients' logout
// do) waited for the co-roots' votes (200, CONSENSUS_NEEDED): the session, and whatever a thief
// holding a copy of it did, stayed live until they approved or it expired, while the kit dropped
// only its local copy. A session key's own logout now runs at once whatever the quorum, as a
// non-root user's does; anything more (another key of its user, a durable key, a co-root's key, a
// list adding one to its own) still waits for the quorum.
import { base32nopad } from '@scure/base'
import { describe, expect, it } from 'vitest'
import { totp } from '../../src/mfa/totp.ts'
import { createHarness, type Harness, resultOf, type TestKey } from '../../src/testing/harness.ts'
import { acts, keyIdOf, login, renew, revokedReasons, subscribed, WEBHOOKS } from './signIns.ts'

const COMPLETED = 'ACTIVITY_STATUS_COMPLETED'
const WAITING = 'ACTIVITY_STATUS_CONSENSUS_NEEDED'

/**
 * `users` root users (three unless told) under a quorum of `threshold` (2 unless told). Root 1 is
 * signed in twice (`session`, `other`); a thief renewed `session` once (`renewal`) while the
 * quorum was 1. Root 2 is signed in (`coSession`). `setUp` runs before the quorum is raised.
 */
async function sharedAccount(
  h: Harness,
  {
    users = 3,
    threshold = 2,
    setUp,
  }: {
    users?: number
    threshold?: number
    /** Returns the next TOTP code when it puts root 1 under MFA (the quorum change then waits for it). */
    setUp?: (s: {
      organizationId: string
      userId: string
      k1: TestKey
    }) => Promise<(() => string) | undefined>
  } = {},
) {
  await subscribed(h)
  const sub = await h.createSubOrganization({ users, threshold: 1 })
  const [k1, k2] = sub.keys as [TestKey, TestKey]
  const [u1, u2] = sub.userIds as [string, string]
  const organizationId = sub.organizationId
  const session = await login(h, k1, organizationId)
  const other = await login(h, k1, organizationId)
  const coSession = await login(h, k2, organizationId)
  const renewal = (await renew(h, session, organizationId)).key!
  expect(renewal).toBeDefined()
  const code = await setUp?.({ organizationId, userId: u1, k1 })
  h.clock.advance(1)
  const raised = await h.submit(
    'update_root_quorum',
    { threshold, userIds: sub.userIds },
    { as: k1, organizationId },
  )
  expect(raised.status, JSON.stringify(raised.body)).toBe(200)
  if (code) {
    h.clock.advance(1)
    const satisfied = await h.submit(
      'latchkey_satisfy_mfa',
      { fingerprint: raised.body.activity.fingerprint, totpCode: code() },
      { as: k1, organizationId },
    )
    expect(satisfied.body.activity?.status, JSON.stringify(satisfied.body)).toBe(COMPLETED)
  } else expect(raised.body.activity.status).toBe(COMPLETED)
  expect((await h.service.store.get('organizations', organizationId))?.rootQuorumThreshold).toBe(threshold)
  return {
    organizationId,
    u1,
    u2,
    k1,
    k2,
    session,
    other,
    renewal,
    coSession,
    sessionId: await keyIdOf(h, u1, session),
    renewalId: await keyIdOf(h, u1, renewal),
  }
}

type Shared = Awaited<ReturnType<typeof sharedAccount>>

/** `delete_api_keys` of `apiKeyIds` of `userId`, stamped by `as`: its reply. */
async function deleteKeys(h: Harness, s: Shared, as: TestKey, userId: string, apiKeyIds: string[]) {
  h.clock.advance(1)
  return h.submit('delete_api_keys', { userId, apiKeyIds }, { as, organizationId: s.organizationId })
}

const exists = async (h: Harness, id: string) => Boolean(await h.service.store.get('apiKeys', id))

describe("a root user's logout under a root quorum above 1", () => {
  for (const [users, threshold] of [
    [2, 2],
    [3, 2],
  ] as const) {
    it(`completes at once in a ${threshold}-of-${users} account and ends the whole sign-in`, async () => {
      const h = await createHarness(WEBHOOKS as never)
      const s = await sharedAccount(h, { users, threshold })
      const otherId = await keyIdOf(h, s.u1, s.other)
      const out = await deleteKeys(h, s, s.session, s.u1, [s.sessionId])
      expect(out.status, JSON.stringify(out.body)).toBe(200)
      expect(out.body.activity.status).toBe(COMPLETED)
      expect(await exists(h, s.sessionId)).toBe(false)
      // The thief's copy and its renewal are refused, and renew no more.
      expect(await acts(h, s.session, s.organizationId)).toBe(401)
      expect(await acts(h, s.renewal, s.organizationId)).toBe(401)
      expect((await renew(h, s.session, s.organizationId)).status).toBe(401)
      expect((await renew(h, s.renewal, s.organizationId)).status).toBe(401)
      expect(await exists(h, s.renewalId)).toBe(false)
      expect(await revokedReasons(h, s.sessionId)).toEqual(['logout'])
      expect(await revokedReasons(h, s.renewalId)).toEqual(['logout'])
      // Nothing else ended: root 1's other sign-in, root 2's session, the durable keys.
      expect(await exists(h, otherId)).toBe(true)
      expect(await exists(h, await keyIdOf(h, s.u2, s.coSession))).toBe(true)
      expect(await exists(h, await keyIdOf(h, s.u1, s.k1))).toBe(true)
      // No vote was asked for: the decision recorded is an allow.
      expect(await h.service.store.findBy('votes', 'activityId', out.body.activity.id)).toEqual([])
    })
  }

  it("a thief's renewal logging itself out ends the owner's sign-in too, at once", async () => {
    const h = await createHarness(WEBHOOKS as never)
    const s = await sharedAccount(h)
    const out = await deleteKeys(h, s, s.renewal, s.u1, [s.renewalId])
    expect(out.body.activity?.status, JSON.stringify(out.body)).toBe(COMPLETED)
    expect(await exists(h, s.sessionId)).toBe(false)
    expect(await acts(h, s.session, s.organizationId)).toBe(401)
  })

  it('is not held by an MFA policy on the root user, as before', async () => {
    const h = await createHarness(WEBHOOKS as never)
    const s = await sharedAccount(h, {
      setUp: async ({ organizationId, userId, k1 }) => {
        h.clock.advance(1)
        const enrolled = resultOf(
          'latchkey_create_totp_factor',
          await h.submit('latchkey_create_totp_factor', { userId }, { as: k1, organizationId }),
        )
        h.clock.advance(1)
        const secret = base32nopad.decode(enrolled.secret)
        resultOf(
          'latchkey_confirm_totp_factor',
          await h.submit(
            'latchkey_confirm_totp_factor',
            {
              userId,
              factorId: enrolled.factorId,
              code: totp(secret, h.clock.now()),
            },
            { as: k1, organizationId },
          ),
        )
        h.clock.advance(1)
        resultOf(
          'create_mfa_policy',
          await h.submit(
            'create_mfa_policy',
            {
              userId,
              mfaPolicyName: 'exports need a code',
              condition: "activity.action == 'EXPORT'",
              requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
              order: 0,
            },
            { as: k1, organizationId },
          ),
        )
        return () => {
          h.clock.advance(30_000)
          return totp(secret, h.clock.now())
        }
      },
    })
    const out = await deleteKeys(h, s, s.session, s.u1, [s.sessionId])
    expect(out.body.activity?.status, JSON.stringify(out.body)).toBe(COMPLETED)
    expect(await exists(h, s.sessionId)).toBe(false)
    expect(await exists(h, s.renewalId)).toBe(false)
  })

  describe('still waits for the root quorum', () => {
    const cases: [string, (h: Harness, s: Shared) => Promise<[TestKey, string, string[]]>][] = [
      [
        'the session deleting another session of its user',
        async (h, s) => [s.session, s.u1, [await keyIdOf(h, s.u1, s.other)]],
      ],
      [
        'the session deleting its user’s durable key',
        async (h, s) => [s.session, s.u1, [await keyIdOf(h, s.u1, s.k1)]],
      ],
      ['a durable key deleting itself', async (h, s) => [s.k1, s.u1, [await keyIdOf(h, s.u1, s.k1)]]],
      [
        'the session deleting a co-root’s session',
        async (h, s) => [s.session, s.u2, [await keyIdOf(h, s.u2, s.coSession)]],
      ],
      [
        'the session deleting a co-root’s durable key',
        async (h, s) => [s.session, s.u2, [await keyIdOf(h, s.u2, s.k2)]],
      ],
      [
        'the session listing its own key and another session of its user',
        async (h, s) => [s.session, s.u1, [s.sessionId, await keyIdOf(h, s.u1, s.other)]],
      ],
      [
        'the session listing its own key and its user’s durable key',
        async (h, s) => [s.session, s.u1, [await keyIdOf(h, s.u1, s.k1), s.sessionId]],
      ],
      ['the session naming its own key under a co-root', async (_h, s) => [s.session, s.u2, [s.sessionId]]],
    ]
    for (const [name, make] of cases)
      it(name, async () => {
        const h = await createHarness(WEBHOOKS as never)
        const s = await sharedAccount(h)
        const [as, userId, apiKeyIds] = await make(h, s)
        const asked = await deleteKeys(h, s, as, userId, apiKeyIds)
        expect(asked.status, JSON.stringify(asked.body)).toBe(200)
        expect(asked.body.activity.status).toBe(WAITING)
        for (const id of [...apiKeyIds, s.sessionId, s.renewalId]) expect(await exists(h, id)).toBe(true)
        expect(await revokedReasons(h, s.sessionId)).toEqual([])
      })
  })

  it('a root’s logout under a quorum of 1 completes as before', async () => {
    const h = await createHarness(WEBHOOKS as never)
    const s = await sharedAccount(h, { threshold: 1 })
    const out = await deleteKeys(h, s, s.session, s.u1, [s.sessionId])
    expect(out.body.activity?.status, JSON.stringify(out.body)).toBe(COMPLETED)
    expect(await acts(h, s.renewal, s.organizationId)).toBe(401)
  })
})
