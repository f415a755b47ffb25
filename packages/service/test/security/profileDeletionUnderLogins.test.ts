// Deleting a session profile (`latchkey_delete_session_profile`, the operator's emergency stop of
// an app's or an agent's sessions) is not held off by logins under it. It used to delete every key
// of the profile in its own SERIALIZABLE transaction, reading them through their index, while each
// login under the profile reads the profile and adds a key to that index range: on PostgreSQL every
// login committing while the deletion ran failed it, and with a few thousand sessions and 10 logins
// a second (within `start`'s default rate limits) it failed with 503 STORAGE_UNAVAILABLE every time
// it was tried, every session left live (test/audit_sessionfix/profileDeletionHeavy.test.ts). Now
// its transaction deletes the profile row and writes a job (`limits.end_profile_sessions`): from
// its commit each session of the profile is refused everything on every instance, reads included
// (`authenticateApiKey` finds its profile gone: 401 PUBLIC_KEY_NOT_FOUND, as a deleted key, which
// the kit takes as signed out), a key an older instance wrote without the index column too; the
// job then deletes the keys, 200 a transaction, each live one with one LATCHKEY_SESSION_REVOKED.
import { describe, expect, it } from 'vitest'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import { endSessionsOfDeletedProfile } from '../../src/domain/sessions.ts'
import { apiKeyInOrganization } from '../../src/kernel/store/model.ts'
import { END_PROFILE_SESSIONS_JOB, endProfileSessionsHandler } from '../../src/limits/sessionProfiles.ts'
import {
  createHarness,
  type Harness,
  type Reply,
  resultOf,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'
import { twoInstances, usePostgres } from '../support/twoInstances.ts'
import { endDeletedSessions, loginUnder, revokedEvents, subscribeToRevocations } from './profileSessions.ts'

const codeOf = (reply: Reply) => [reply.status, reply.body?.details?.errorCode]

/** The job worker polls only when a test steps it (`runDue`), so a test sees the keys before it runs. */
const STEPPED: Partial<CreateServiceOptions> = { jobs: { pollMs: 3_600_000 } }

/** What `key` gets on `h` in `organizationId`: a read (list_wallets) and an activity (create_wallet). */
async function uses(h: Harness, key: TestKey, organizationId: string) {
  const read = codeOf(await h.query('list_wallets', { organizationId }, { as: key, organizationId }))
  h.clock.advance(1)
  const act = codeOf(
    await h.submit('create_wallet', { walletName: 'x', accounts: [] }, { as: key, organizationId }),
  )
  return [read, act]
}

const REFUSED = [
  [401, 'PUBLIC_KEY_NOT_FOUND'],
  [401, 'PUBLIC_KEY_NOT_FOUND'],
]

/**
 * `count` more sessions of the user of `model` under its profile: rows as its login wrote it, with
 * fresh ids and keys (`keys`: the first of them, with their private keys, for the test to use).
 */
async function copies(h: Harness, modelId: string, count: number, kept = 3) {
  const model = (await h.service.store.get('apiKeys', modelId))!
  const keys: TestKey[] = []
  for (let done = 0; done < count; )
    await h.service.store.transaction(async (tx) => {
      for (let i = 0; i < 250 && done + i < count; i++) {
        const key = testKey()
        if (keys.length < kept) keys.push(key)
        await tx.put('apiKeys', {
          ...model,
          id: `${model.id}-copy-${done + i}`,
          publicKey: key.publicKey,
          keyInOrganization: apiKeyInOrganization(key.publicKey, model.organizationId),
        })
      }
      done = Math.min(count, done + 250)
    })
  return keys
}

describe('deleting a busy session profile (PostgreSQL, two instances)', () => {
  const postgres = usePostgres()

  it('commits under a stream of logins on both instances; every session is refused at once on both, and each key goes with one event', {
    timeout: 120_000,
  }, async () => {
    const [a, b] = await twoInstances(postgres.cluster, 'profile_deletion_under_logins', STEPPED)
    await subscribeToRevocations(a)
    a.clock.advance(1)
    const app = resultOf(
      'create_session_profile',
      await a.submit('create_session_profile', { sessionProfileName: 'app', scope: 'true' }),
    ).sessionProfileId as string
    // The profile's existing sessions: 3,000 of one account (not logging in during the test), and
    // two accounts logging in under it, one on each instance.
    const holder = await a.createSubOrganization({ name: 'holder' })
    const first = await loginUnder(a, holder.organizationId, holder.keys[0]!, app, {
      expirationSeconds: '2592000',
    })
    const seeded = await copies(a, first.apiKeyId, 3000)
    const subs = [
      await a.createSubOrganization({ name: 'one' }),
      await a.createSubOrganization({ name: 'two' }),
    ]

    let stop = false
    const loggedIn: { key: TestKey; organizationId: string }[] = []
    const others: unknown[] = []
    const streams = subs.map(async (sub, i) => {
      const h = i === 0 ? b : a
      while (!stop) {
        const key = testKey()
        const reply = await h.submit(
          'stamp_login',
          { publicKey: key.publicKey, sessionProfileId: app, expirationSeconds: '2592000' },
          { as: sub.keys[0]!, organizationId: sub.organizationId },
        )
        if (reply.status === 200) loggedIn.push({ key, organizationId: sub.organizationId })
        else if (reply.status === 404) break
        else others.push(codeOf(reply))
        // Two accounts at 5 logins a second each: 10 a second in all.
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    })
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const deletion = await a.submit('latchkey_delete_session_profile', { sessionProfileId: app })
    // Once it answered (whether the logins stopped or not).
    const afterDeletion = loggedIn.length
    stop = true
    await Promise.all(streams)
    expect(codeOf(deletion)).toEqual([200, undefined])
    expect(deletion.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(others).toEqual([])
    expect(afterDeletion).toBeGreaterThan(0)

    // At once, on both instances, while their keys are still there: every session of the profile
    // (the holder's first, its copies, the last logins of the stream) is refused reads and activities.
    expect(await a.service.store.count('apiKeys', 'sessionProfileId', app)).toBeGreaterThan(3000)
    const sessions = [
      { key: first.key, organizationId: holder.organizationId },
      ...seeded.map((key) => ({ key, organizationId: holder.organizationId })),
      ...loggedIn.slice(-2),
    ]
    for (const h of [a, b])
      for (const { key, organizationId } of sessions)
        expect(await uses(h, key, organizationId)).toEqual(REFUSED)
    // A login under it now is a 404, on either instance.
    for (const [h, sub] of [
      [a, subs[1]!],
      [b, subs[0]!],
    ] as const) {
      h.clock.advance(1)
      expect(
        codeOf(
          await h.submit(
            'stamp_login',
            { publicKey: testKey().publicKey, sessionProfileId: app },
            { as: sub.keys[0]!, organizationId: sub.organizationId },
          ),
        ),
      ).toEqual([404, 'SESSION_PROFILE_NOT_FOUND'])
    }

    // The job, run by both instances' workers: every key goes, each with one event naming the deletion.
    const before = await a.service.store.findBy('apiKeys', 'sessionProfileId', app)
    await endDeletedSessions(a, b)
    expect(await a.service.store.count('apiKeys', 'sessionProfileId', app)).toBe(0)
    const events = (await revokedEvents(a))
      .map((event) => event.data)
      .filter((event) => event.reason === 'deleted')
    const ids = events.map((event) => event.apiKeyId as string)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.sort()).toEqual(before.map((key) => key.id).sort())
    const activityId = deletion.body.activity.id as string
    expect(events.every((event) => event.activityId === activityId)).toBe(true)
    for (const h of [a, b]) await h.service.close()
  })

  it('a session key an older instance wrote without the index column is refused too, its logout as well', {
    timeout: 60_000,
  }, async () => {
    const database = 'profile_deletion_older_key'
    const [a, b] = await twoInstances(postgres.cluster, database, STEPPED)
    const sub = await a.createSubOrganization({ name: 'agent' })
    const at = { as: sub.keys[0]!, organizationId: sub.organizationId }
    a.clock.advance(1)
    const sessionProfileId = resultOf(
      'create_session_profile',
      await a.submit('create_session_profile', { sessionProfileName: 'agent', scope: 'true' }, at),
    ).sessionProfileId as string
    const older = await loginUnder(b, sub.organizationId, sub.keys[0]!, sessionProfileId, {
      expirationSeconds: '2592000',
    })
    const newer = await loginUnder(b, sub.organizationId, sub.keys[0]!, sessionProfileId, {
      expirationSeconds: '2592000',
    })
    // As a version before migration 0028 wrote it: the profile in its document, not in the column.
    postgres.cluster.psql(
      `update "apiKeys" set "sessionProfileId" = null where id = '${older.apiKeyId}'`,
      database,
    )
    expect(
      (await a.service.store.findBy('apiKeys', 'sessionProfileId', sessionProfileId)).map((key) => key.id),
    ).toEqual([newer.apiKeyId])
    for (const h of [a, b])
      expect(await uses(h, older.key, sub.organizationId)).toEqual([
        [200, undefined],
        [200, undefined],
      ])

    a.clock.advance(1)
    resultOf(
      'latchkey_delete_session_profile',
      await a.submit('latchkey_delete_session_profile', { sessionProfileId }, at),
    )
    await endDeletedSessions(a, b)
    // The job found the newer key only; the older one stays (until it expires) and is refused all
    // the same, on both instances, its own logout too (401 PUBLIC_KEY_NOT_FOUND: the kit's logout
    // takes that as signed out).
    expect(await a.service.store.get('apiKeys', newer.apiKeyId)).toBeUndefined()
    expect(await a.service.store.get('apiKeys', older.apiKeyId)).toBeDefined()
    for (const h of [a, b]) {
      expect(await uses(h, older.key, sub.organizationId)).toEqual(REFUSED)
      h.clock.advance(1)
      expect(
        codeOf(
          await h.submit(
            'delete_api_keys',
            { userId: sub.userIds[0], apiKeyIds: [older.apiKeyId] },
            { as: older.key, organizationId: sub.organizationId },
          ),
        ),
      ).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    }
    for (const h of [a, b]) await h.service.close()
  })
})

describe("the deletion's job", () => {
  it('deletes 200 keys a transaction, hands on and resumes from what is left, one event per live key', {
    timeout: 60_000,
  }, async () => {
    const h = await createHarness(STEPPED)
    await subscribeToRevocations(h)
    h.clock.advance(1)
    const app = resultOf(
      'create_session_profile',
      await h.submit('create_session_profile', { sessionProfileName: 'app', scope: 'true' }),
    ).sessionProfileId as string
    const sub = await h.createSubOrganization({ name: 'holder' })
    const first = await loginUnder(h, sub.organizationId, sub.keys[0]!, app, { expirationSeconds: '2592000' })
    const [copy] = await copies(h, first.apiKeyId, 649, 1)
    h.clock.advance(1)
    const deletion = await h.submit('latchkey_delete_session_profile', { sessionProfileId: app })
    resultOf('latchkey_delete_session_profile', deletion)
    const activityId = deletion.body.activity.id as string
    const { runtime, store } = h.service
    // Nothing deleted in the deletion's transaction: refused all the same.
    expect(await store.count('apiKeys', 'sessionProfileId', app)).toBe(650)
    expect(await uses(h, copy!, sub.organizationId)).toEqual(REFUSED)
    const [job] = await store.findBy('jobs', 'kind', END_PROFILE_SESSIONS_JOB)
    const payload = JSON.parse((job!.payload as { json: string }).json)
    expect(payload).toMatchObject({ sessionProfileId: app, activityId })

    // A worker that stopped after one batch (its process ended): the job is still there.
    await store.transaction((tx) => endSessionsOfDeletedProfile(runtime, tx, payload))
    expect(await store.count('apiKeys', 'sessionProfileId', app)).toBe(450)
    // A run told to stop (a drain) ends after its batch and puts its job again, due now.
    const stopped = new AbortController()
    stopped.abort()
    await endProfileSessionsHandler(runtime).run(payload, {
      jobId: job!.id,
      kind: END_PROFILE_SESSIONS_JOB,
      attempt: 1,
      uncertain: false,
      signal: stopped.signal,
    })
    expect(await store.count('apiKeys', 'sessionProfileId', app)).toBe(250)
    expect(await store.get('jobs', job!.id)).toMatchObject({ state: 'pending' })
    // The worker finishes it.
    await endDeletedSessions(h)
    expect(await store.count('apiKeys', 'sessionProfileId', app)).toBe(0)
    const ids = (await revokedEvents(h)).map((event) => event.data.apiKeyId as string)
    expect(ids.length).toBe(650)
    expect(new Set(ids).size).toBe(650)
    await h.service.close()
  })
})
