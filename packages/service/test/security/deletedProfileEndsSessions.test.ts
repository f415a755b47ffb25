// Deleting a session profile (`latchkey_delete_session_profile`) ends its sessions: from its commit
// a key issued under the profile is refused everything (`authenticateApiKey` finds its profile
// gone), and the limits wing's job (`limits.end_profile_sessions`) deletes those keys after it, a
// batch a transaction (domain/sessions.ts `endSessionsOfDeletedProfile`, read through the index of
// migration 0028_session_profile_keys), so a session of the deleted profile reads nothing more
// either. Before, only its activities were refused: its queries (users and their contacts, API
// keys, wallets, whoami) answered 200 for the rest of its life, up to 30 days
// (test/audit_sessions/deletedProfileStillReads.test.ts). An app's profile ends its sessions in
// every sub-organization; other sessions stay; each live one ended is a LATCHKEY_SESSION_REVOKED
// (`deleted`). On two instances of one PostgreSQL database the other instance refuses them as
// well, and a login under the profile racing its deletion on the other instance either fails
// (the profile is gone) or is ended by it. (The deletion under a stream of logins:
// profileDeletionUnderLogins.test.ts.)
import { describe, expect, it } from 'vitest'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Reply,
  resultOf,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'
import { twoInstances, usePostgres } from '../support/twoInstances.ts'
import { endDeletedSessions, loginUnder, revokedEvents, subscribeToRevocations } from './profileSessions.ts'

const codeOf = (reply: Reply) => [reply.status, reply.body?.details?.errorCode]

const WEBHOOKS: Partial<CreateServiceOptions> = {
  webhooks: { transport: async () => ({ status: 200, body: '' }) },
  jobs: { pollMs: 3_600_000, backoff: { baseMs: 1000, maxMs: 60_000 } },
}

/** A session profile of `organizationId` (the parent's when absent) with scope `true`, made on `h`. */
async function profile(h: Harness, name: string, at?: { as: TestKey; organizationId: string }) {
  h.clock.advance(1)
  return resultOf(
    'create_session_profile',
    await h.submit('create_session_profile', { sessionProfileName: name, scope: 'true' }, at),
  ).sessionProfileId as string
}

async function deleteProfile(
  h: Harness,
  sessionProfileId: string,
  at?: { as: TestKey; organizationId: string },
) {
  h.clock.advance(1)
  return h.submit('latchkey_delete_session_profile', { sessionProfileId }, at)
}

/** Whether `as` still reads `organizationId` on `h` (list_wallets' status). */
const reads = async (h: Harness, as: TestKey, organizationId: string) =>
  (await h.query('list_wallets', { organizationId }, { as, organizationId })).status

describe('deleting a session profile ends its sessions', () => {
  it('a session of the deleted profile reads nothing more (users, keys, wallets, whoami) and acts on nothing; others stay', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({
      wallet: { walletName: 'Agent', accounts: [ETHEREUM_ACCOUNT] },
    })
    const owner = sub.keys[0]!
    const { organizationId } = sub
    const at = { as: owner, organizationId }
    const deleted = await profile(h, 'agent', at)
    const kept = await profile(h, 'other', at)
    const agent = await loginUnder(h, organizationId, owner, deleted, { expirationSeconds: '2592000' })
    const sibling = await loginUnder(h, organizationId, owner, deleted)
    const other = await loginUnder(h, organizationId, owner, kept)
    const plain = await loginUnder(h, organizationId, owner)
    expect(await reads(h, agent.key, organizationId)).toBe(200)

    resultOf('latchkey_delete_session_profile', await deleteProfile(h, deleted, at))

    // At once, and still a week later: every read and every activity of its sessions is refused.
    for (const advance of [0, 7 * 24 * 3600_000]) {
      h.clock.advance(advance)
      for (const session of [agent.key, sibling.key]) {
        const refused = []
        for (const path of ['list_users', 'get_api_keys', 'list_wallets', 'whoami'] as const) {
          const body =
            path === 'get_api_keys' ? { organizationId, userId: sub.userIds[0] } : { organizationId }
          refused.push([path, ...codeOf(await h.query(path, body, { as: session, organizationId }))])
        }
        expect(refused).toEqual(
          ['list_users', 'get_api_keys', 'list_wallets', 'whoami'].map((path) => [
            path,
            401,
            'PUBLIC_KEY_NOT_FOUND',
          ]),
        )
        h.clock.advance(1)
        expect(
          codeOf(
            await h.submit(
              'create_wallet',
              { walletName: 'x', accounts: [] },
              { as: session, organizationId },
            ),
          ),
        ).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
      }
      if (advance === 0) {
        // Another profile's session, an unprofiled session and the owner are untouched.
        for (const key of [other.key, plain.key, owner]) expect(await reads(h, key, organizationId)).toBe(200)
      }
    }
    // Their keys are gone once the deletion's job ran; the others' stay.
    await endDeletedSessions(h)
    const left = (await h.service.store.findBy('apiKeys', 'organizationId', organizationId)).map(
      (key) => key.id,
    )
    expect(left).not.toContain(agent.apiKeyId)
    expect(left).not.toContain(sibling.apiKeyId)
    expect(left).toContain(other.apiKeyId)
    expect(left).toContain(plain.apiKeyId)
  })

  it("an app's profile ends its sessions in every sub-organization, one LATCHKEY_SESSION_REVOKED for each live one", async () => {
    const h = await createHarness(WEBHOOKS)
    await subscribeToRevocations(h)
    const app = await profile(h, 'app')
    const otherApp = await profile(h, 'other app')
    const one = await h.createSubOrganization({ name: 'one' })
    const two = await h.createSubOrganization({ name: 'two' })
    const a = await loginUnder(h, one.organizationId, one.keys[0]!, app, { expirationSeconds: '3600' })
    const b = await loginUnder(h, two.organizationId, two.keys[0]!, app, { expirationSeconds: '3600' })
    // One that ended by itself (a minute) before the deletion: its row goes, with no event.
    const expired = await loginUnder(h, two.organizationId, two.keys[0]!, app, { expirationSeconds: '60' })
    const kept = await loginUnder(h, two.organizationId, two.keys[0]!, otherApp, {
      expirationSeconds: '3600',
    })
    h.clock.advance(61_000)
    const before = (await revokedEvents(h)).length

    const reply = await deleteProfile(h, app)
    resultOf('latchkey_delete_session_profile', reply)
    const activityId = reply.body.activity.id as string

    expect(
      codeOf(await h.query('list_wallets', {}, { as: a.key, organizationId: one.organizationId })),
    ).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect(
      codeOf(await h.query('list_wallets', {}, { as: b.key, organizationId: two.organizationId })),
    ).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect(await reads(h, kept.key, two.organizationId)).toBe(200)
    // Refused while their keys are still there: the job that deletes them has not run yet.
    expect(await h.service.store.get('apiKeys', a.apiKeyId)).toBeDefined()
    await endDeletedSessions(h)
    for (const gone of [a, b, expired])
      expect(await h.service.store.get('apiKeys', gone.apiKeyId)).toBeUndefined()
    const events = (await revokedEvents(h)).slice(before)
    const byKey = (event: { data: Record<string, unknown> }) => event.data.apiKeyId as string
    expect(events.sort((x, y) => byKey(x).localeCompare(byKey(y)))).toEqual(
      [
        {
          organizationId: one.organizationId,
          data: { userId: a.userId, apiKeyId: a.apiKeyId, reason: 'deleted', activityId },
        },
        {
          organizationId: two.organizationId,
          data: { userId: b.userId, apiKeyId: b.apiKeyId, reason: 'deleted', activityId },
        },
      ].sort((x, y) => byKey(x).localeCompare(byKey(y))),
    )
  })

  it("a sub-organization cannot delete the app's profile, nor end its sessions elsewhere", async () => {
    const h = await createHarness()
    const app = await profile(h, 'app')
    const one = await h.createSubOrganization({ name: 'one' })
    const two = await h.createSubOrganization({ name: 'two' })
    const session = await loginUnder(h, one.organizationId, one.keys[0]!, app)
    expect(
      codeOf(await deleteProfile(h, app, { as: two.keys[0]!, organizationId: two.organizationId })),
    ).toEqual([404, 'SESSION_PROFILE_NOT_FOUND'])
    expect(await reads(h, session.key, one.organizationId)).toBe(200)
  })
})

describe('deleting a session profile on two instances of one PostgreSQL database', () => {
  const postgres = usePostgres()

  it('the other instance refuses its sessions from the commit on', { timeout: 120_000 }, async () => {
    const [a, b] = await twoInstances(postgres.cluster, 'profile_deleted_steady')
    const sub = await a.createSubOrganization({ name: 'agent' })
    const at = { as: sub.keys[0]!, organizationId: sub.organizationId }
    const sessionProfileId = await profile(a, 'agent', at)
    // Issued on B, read on both.
    const session = await loginUnder(b, sub.organizationId, sub.keys[0]!, sessionProfileId)
    for (const h of [a, b]) expect(await reads(h, session.key, sub.organizationId)).toBe(200)
    resultOf('latchkey_delete_session_profile', await deleteProfile(a, sessionProfileId, at))
    for (const h of [b, a])
      expect(
        codeOf(await h.query('list_wallets', {}, { as: session.key, organizationId: sub.organizationId })),
      ).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    for (const h of [a, b]) await h.service.close()
  })

  it('a login under the profile on B racing its deletion on A fails, or its session is ended', {
    timeout: 180_000,
  }, async () => {
    const [a, b] = await twoInstances(postgres.cluster, 'profile_deleted_race')
    const sub = await a.createSubOrganization({ name: 'agent' })
    const owner = sub.keys[0]!
    const at = { as: owner, organizationId: sub.organizationId }
    for (let round = 0; round < 8; round++) {
      const sessionProfileId = await profile(a, `agent ${round}`, at)
      const key = testKey()
      a.clock.advance(1)
      const [loggedIn, deletion] = await Promise.all([
        b.submit('stamp_login', { publicKey: key.publicKey, sessionProfileId }, at),
        a.submit('latchkey_delete_session_profile', { sessionProfileId }, at),
      ])
      resultOf('latchkey_delete_session_profile', deletion)
      // The login ran first (its session ended by the deletion) or after (the profile gone).
      const outcome = codeOf(loggedIn)
      expect([
        [200, undefined],
        [404, 'SESSION_PROFILE_NOT_FOUND'],
      ]).toContainEqual(outcome)
      for (const h of [a, b])
        expect(
          codeOf(await h.query('list_wallets', {}, { as: key, organizationId: sub.organizationId })),
        ).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
      // And its key, if it was issued, goes with the deletion's job (on either instance).
      await endDeletedSessions(a, b)
      expect(await a.service.store.findBy('apiKeys', 'sessionProfileId', sessionProfileId)).toEqual([])
    }
    for (const h of [a, b]) await h.service.close()
  })
})
