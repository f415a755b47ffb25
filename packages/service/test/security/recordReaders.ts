// What the "not in records" tests share: a reader of an organization's activity records finds their
// ids in its ACTIVITY_UPDATES deliveries (`latchkey_list_webhook_deliveries`, which every reader may
// list) and reads each with `get_activity`. The readers they try: a support tool's non-root user of
// the operator's organization, a stolen read-only session, a removed user.
import { expect } from 'vitest'
import { type Harness, resultOf, type Stamper, testKey } from '../../src/testing/harness.ts'

/** Who reads: a credential and the organization it reads in. */
export interface Reader {
  as: Stamper
  organizationId: string
}

/** An endpoint of `as`'s organization (the harness's own by default) that gets ACTIVITY_UPDATES. */
export async function announceActivities(h: Harness, as?: Reader): Promise<void> {
  resultOf(
    'create_webhook_endpoint',
    await h.submit(
      'create_webhook_endpoint',
      { url: 'https://hooks.example.com/x', name: 'ops', subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }] },
      as,
    ),
  )
}

/** A support tool's user of the operator's organization: not a root user, no policy. */
export async function supportUser(h: Harness): Promise<Reader> {
  const staffKey = testKey()
  resultOf(
    'create_users',
    await h.submit('create_users', {
      users: [
        {
          userName: 'support',
          apiKeys: [staffKey.apiKey('support')],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    }),
  )
  return { as: staffKey, organizationId: h.organizationId }
}

/**
 * The activities `reader` finds in its organization's deliveries (`{ activityId, activityType }`),
 * and the deliveries' bodies as listed.
 */
export async function announcedActivities(
  h: Harness,
  reader: Reader,
): Promise<{ activities: { activityId: string; activityType: string }[]; listed: string }> {
  const deliveries = await h.query(
    'latchkey_list_webhook_deliveries',
    { paginationOptions: { limit: '100' } },
    reader,
  )
  expect(deliveries.status).toBe(200)
  const activities = (deliveries.body.webhookDeliveries as { body: string }[])
    .map((d) => (JSON.parse(d.body) as { data?: Record<string, string> }).data ?? {})
    .filter((data) => data.activityId !== undefined)
    .map((data) => ({ activityId: data.activityId!, activityType: data.activityType ?? '' }))
  return { activities, listed: JSON.stringify(deliveries.body) }
}

/** The ids of the activities `reader` finds announced whose type passes `type`. */
export async function announcedIds(h: Harness, reader: Reader, type: (activityType: string) => boolean) {
  const { activities } = await announcedActivities(h, reader)
  return activities.filter((a) => type(a.activityType)).map((a) => a.activityId)
}
