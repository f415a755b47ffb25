import type { WebhookEventBody } from '@latchkey/protocol'
import type { AppEvent } from '../kernel/appEvents.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { WebhookEndpointRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Store.ts'

/** The job kind of one delivery (payload `{ deliveryId }`). */
export const DELIVER_JOB = 'webhooks.deliver'

/** A subscription's filter (`filtersJson`), parsed: every list given must contain the event's value. */
export interface SubscriptionFilter {
  activityTypes?: string[]
  statuses?: string[]
  organizationIds?: string[]
}

/** Whether `endpoint` wants `event` (an active subscription of its type whose filter passes). */
export function wants(endpoint: WebhookEndpointRow, event: AppEvent): boolean {
  if (!endpoint.isActive) return false
  const data = event.data as Record<string, unknown>
  return endpoint.subscriptions.some((subscription) => {
    if (!subscription.isActive || subscription.eventType !== event.type) return false
    const filter: SubscriptionFilter = subscription.filtersJson ? JSON.parse(subscription.filtersJson) : {}
    if (filter.activityTypes && !filter.activityTypes.includes(String(data.activityType))) return false
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

/**
 * Writes `event` in `tx` for every endpoint of its organization and of its parent that wants it:
 * the body as it will be signed (its `sequence` 0 until the endpoint's sender numbers it) and,
 * where deliveries are sent (`deliver`), the delivery's job (not run before the transaction commits). Nothing is updated: the endpoint's
 * sequence number is given at delivery (deliver.ts, `numberWaiting`), so concurrent activities
 * that an endpoint wants only add rows and never wait for or fail each other. A paused endpoint's
 * delivery waits, paused, for the endpoint to be resumed. Who gets it is read in `tx` (never from a
 * cache): an endpoint created on another instance gets every event whose transaction commits
 * after its own.
 */
export async function recordEvent(
  runtime: Runtime,
  tx: Transaction,
  event: AppEvent,
  options: { deliver: boolean },
): Promise<void> {
  const parentId =
    'parentOrganizationId' in event.organization
      ? event.organization.parentOrganizationId
      : (await tx.get('organizations', event.organization.id))?.parentOrganizationId
  const endpoints = [
    ...(await tx.findBy('webhookEndpoints', 'organizationId', event.organization.id)),
    ...(parentId ? await tx.findBy('webhookEndpoints', 'organizationId', parentId) : []),
  ].filter((endpoint) => wants(endpoint, event))
  if (endpoints.length === 0) return
  const eventId = event.id ?? `evt_${runtime.newId()}`
  const now = runtime.now()
  const sent: string[] = []
  for (const endpoint of endpoints) {
    const body: WebhookEventBody = {
      version: 1,
      id: eventId,
      type: event.type,
      organizationId: event.organization.id,
      createdAtMs: String(now),
      endpointId: endpoint.id,
      sequence: 0,
      data: event.data,
    }
    const id = deliveryIdOf(eventId, endpoint.id)
    const listKey = listKeyOf(now, runtime.newId())
    await tx.put('webhookDeliveries', {
      id,
      eventId,
      endpointId: endpoint.id,
      organizationId: event.organization.id,
      eventType: event.type,
      sequence: 0,
      body: JSON.stringify(body),
      state: endpoint.pausedAt ? 'paused' : 'pending',
      attempts: 0,
      createdAt: now,
      updatedAt: now,
      waitingFor: endpoint.id,
      queueKey: queueKeyOf(0, listKey),
      listKey,
    })
    if (!endpoint.pausedAt) sent.push(id)
  }
  // One job for the event's deliveries (a row less per endpoint on the request path). No
  // transport, no job: the deliveries wait, and a start with one enqueues a sender.
  if (sent.length > 0 && options.deliver)
    await runtime.jobs.enqueue(tx, DELIVER_JOB, { deliveryIds: sent }, { id: `job.${eventId}` })
}

/** The job of a delivery. */
export const jobIdOf = (deliveryId: string) => `job.${deliveryId}`
