import { ACTIVITIES, type WebhookEventBody } from '@latchkey/protocol'
import type { AppEvent } from '../kernel/appEvents.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { WebhookEndpointRow, WebhookEventRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Store.ts'

/** The job kind of one delivery (payload `{ deliveryId }`). */
export const DELIVER_JOB = 'webhooks.deliver'

/** A subscription's filter (`filtersJson`), parsed: every list given must contain the event's value. */
export interface SubscriptionFilter {
  activityTypes?: string[]
  statuses?: string[]
  organizationIds?: string[]
}

/**
 * Every type name an activity accepts, by each of them (`ACTIVITY_TYPE_CREATE_API_KEYS` and its
 * `_V2`, `INIT_OTP` V1 to V3, …): an event carries the name its caller submitted.
 */
const TYPE_NAMES = new Map<string, readonly string[]>(
  Object.values(ACTIVITIES).flatMap((activity) =>
    activity.types.map((type) => [type, activity.types] as const),
  ),
)

/**
 * Whether `endpoint` wants `event` (an active subscription of its type whose filter passes). An
 * `activityTypes` filter matches an activity by any of the names it accepts: an end user who
 * submits an older name of the activity the operator watches is still heard.
 */
export function wants(endpoint: WebhookEndpointRow, event: AppEvent): boolean {
  if (!endpoint.isActive) return false
  const data = event.data as Record<string, unknown>
  const activityType = String(data.activityType)
  const typeNames = TYPE_NAMES.get(activityType) ?? [activityType]
  return endpoint.subscriptions.some((subscription) => {
    if (!subscription.isActive || subscription.eventType !== event.type) return false
    const filter: SubscriptionFilter = subscription.filtersJson ? JSON.parse(subscription.filtersJson) : {}
    if (filter.activityTypes && !typeNames.some((name) => filter.activityTypes!.includes(name))) return false
    if (filter.statuses && !filter.statuses.includes(String(data.activityStatus ?? data.status))) return false
    if (filter.organizationIds && !filter.organizationIds.includes(event.organization.id)) return false
    return true
  })
}

/** The delivery row's id (and its job's): one per event and endpoint. */
export const deliveryIdOf = (eventId: string, endpointId: string) => `${eventId}.${endpointId}`

/**
 * Where a delivery sorts in its endpoint's listing (`listKey`): when it was recorded (15 digits),
 * then a new id's hex (in the order recorded, within a millisecond). Digits and lower-case hex
 * only, so every database collation orders it as JavaScript does.
 */
export const listKeyOf = (createdAt: number, newId: string) =>
  `${String(createdAt).padStart(15, '0')}${newId.replace(/-/g, '')}`

/** Where a delivery stands in its endpoint's queue (`queueKey`): `a` and its number, or `b` and its listKey (after every number). */
export const queueKeyOf = (sequence: number, listKey: string) =>
  sequence > 0 ? `a${String(sequence).padStart(12, '0')}` : `b${listKey}`

/** The queue keys of deliveries not numbered yet are the ones after this (`b…`). */
export const UNNUMBERED_AFTER = 'b'

/** `body` (a delivery's, as recorded) with its sequence number written in. */
export function numberedBody(body: string, sequence: number): string {
  return JSON.stringify({ ...(JSON.parse(body) as WebhookEventBody), sequence })
}

/** The value of `WebhookEventRow.waiting` while an event waits to be fanned out. */
export const WAITING = 'yes'

/**
 * Writes `event` in `tx` as one row naming every endpoint of its organization and of its parent
 * that wants it (read in `tx`, never from a cache: an endpoint created on another instance gets
 * every event whose transaction commits after its own). Nothing else: no delivery row, no job,
 * nothing updated, so concurrent activities only add a row each and never wait for or fail each
 * other. The fan-out (deliver.ts `fanOut`, run by the job worker's ticks) numbers it per endpoint
 * as delivery rows, in the order events committed, and enqueues their sender.
 */
export async function recordEvent(runtime: Runtime, tx: Transaction, event: AppEvent): Promise<void> {
  const parentId =
    'parentOrganizationId' in event.organization
      ? event.organization.parentOrganizationId
      : (await tx.get('organizations', event.organization.id))?.parentOrganizationId
  const endpoints = [
    ...(await tx.findBy('webhookEndpoints', 'organizationId', event.organization.id)),
    ...(parentId ? await tx.findBy('webhookEndpoints', 'organizationId', parentId) : []),
  ].filter((endpoint) => wants(endpoint, event))
  if (endpoints.length === 0) return
  const now = runtime.now()
  await tx.put('webhookEvents', {
    id: event.id ?? `evt_${runtime.newId()}`,
    organizationId: event.organization.id,
    eventType: event.type,
    data: event.data,
    endpointIds: endpoints.map((endpoint) => endpoint.id),
    waiting: WAITING,
    listKey: listKeyOf(now, runtime.newId()),
    createdAt: now,
    updatedAt: now,
  })
}

/** The body of `event` for one endpoint, as signed on every try, with its number in the endpoint's order. */
export function bodyOf(event: WebhookEventRow, endpointId: string, sequence: number): string {
  const body: WebhookEventBody = {
    version: 1,
    id: event.id,
    type: event.eventType as WebhookEventBody['type'],
    organizationId: event.organizationId,
    createdAtMs: String(event.createdAt),
    endpointId,
    sequence,
    data: event.data as WebhookEventBody['data'],
  }
  return JSON.stringify(body)
}

/** The job of a delivery. */
export const jobIdOf = (deliveryId: string) => `job.${deliveryId}`

/** The job kind that resumes an endpoint's waiting deliveries a page at a time (resume.ts). */
export const RESUME_JOB = 'webhooks.resume'

/** The resume job of an endpoint (one an endpoint: a resume while one runs starts it over). */
export const resumeJobIdOf = (endpointId: string) => `job.resume.${endpointId}`
