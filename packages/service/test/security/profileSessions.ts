// What the session profile deletion tests share: an endpoint that hears LATCHKEY_SESSION_REVOKED,
// the events recorded, a login under a profile, and stepping the job that deletes a deleted
// profile's session keys (`limits.end_profile_sessions`) to its end.
import { expect } from 'vitest'
import { END_PROFILE_SESSIONS_JOB } from '../../src/limits/sessionProfiles.ts'
import { type Harness, resultOf, type TestKey, testKey } from '../../src/testing/harness.ts'

/** The parent organization's endpoint, subscribed to LATCHKEY_SESSION_REVOKED (its sub-organizations' too). */
export async function subscribeToRevocations(h: Harness) {
  resultOf(
    'create_webhook_endpoint',
    await h.submit('create_webhook_endpoint', {
      url: 'http://127.0.0.1:9/hook',
      name: 'app',
      subscriptions: [{ eventType: 'LATCHKEY_SESSION_REVOKED' }],
    }),
  )
}

/** Every LATCHKEY_SESSION_REVOKED recorded (waiting to be fanned out, or fanned out), with its organization. */
export async function revokedEvents(
  h: Harness,
): Promise<{ organizationId: string; data: Record<string, unknown> }[]> {
  const waiting = (await h.service.store.all('webhookEvents'))
    .filter((event) => event.eventType === 'LATCHKEY_SESSION_REVOKED')
    .map((event) => ({ organizationId: event.organizationId, data: event.data as Record<string, unknown> }))
  const delivered = (await h.service.store.all('webhookDeliveries'))
    .filter((delivery) => delivery.eventType === 'LATCHKEY_SESSION_REVOKED')
    .map((delivery) => JSON.parse(delivery.body) as { organizationId: string; data: Record<string, unknown> })
    .map((body) => ({ organizationId: body.organizationId, data: body.data }))
  return [...waiting, ...delivered]
}

/** A session key `by` logs in under `sessionProfileId` (none: an unprofiled session) on `h`: its key, its row's id and user. */
export async function loginUnder(
  h: Harness,
  organizationId: string,
  by: TestKey,
  sessionProfileId?: string,
  more: Record<string, unknown> = {},
) {
  const key = testKey()
  h.clock.advance(1)
  resultOf(
    'stamp_login',
    await h.submit(
      'stamp_login',
      { publicKey: key.publicKey, ...(sessionProfileId ? { sessionProfileId } : {}), ...more },
      { as: by, organizationId },
    ),
  )
  const row = (await h.service.store.findBy('apiKeys', 'publicKey', key.publicKey))[0]!
  return { key, apiKeyId: row.id, userId: row.userId }
}

/**
 * Runs the deleted profiles' key deletions (`limits.end_profile_sessions`) until none is left: on
 * `instances`' workers (and their own polling), within 40 s.
 */
export async function endDeletedSessions(...instances: Harness[]) {
  const { store } = instances[0]!.service
  const deadline = Date.now() + 40_000
  while ((await store.count('jobs', 'kind', END_PROFILE_SESSIONS_JOB)) > 0 && Date.now() < deadline) {
    for (const h of instances) {
      await h.service.runtime.jobs.runDue()
      await h.service.runtime.jobs.idle()
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  expect(await store.count('jobs', 'kind', END_PROFILE_SESSIONS_JOB)).toBe(0)
}
