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
 * Writes `event` in `tx` for every endpoint of its organization and of its parent that wants it:
 * the endpoint's next sequence number, the body as it will be signed, and the delivery's job
 * (not run before the transaction commits). A paused endpoint's delivery waits, paused, for the
 * endpoint to be resumed. Who gets it is read in `tx` (never from a cache): an endpoint created
 * on another instance gets every event whose transaction commits after its own.
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
  const eventId = event.id ?? `evt_${runtime.newId()}`
  const now = runtime.now()
  for (const endpoint of endpoints) {
    const sequence = endpoint.sequence + 1
    await tx.put('webhookEndpoints', { ...endpoint, sequence, updatedAt: now })
    const body: WebhookEventBody = {
      version: 1,
      id: eventId,
      type: event.type,
      organizationId: event.organization.id,
      createdAtMs: String(now),
      endpointId: endpoint.id,
      sequence,
      data: event.data,
    }
    const id = deliveryIdOf(eventId, endpoint.id)
    await tx.put('webhookDeliveries', {
      id,
      eventId,
      endpointId: endpoint.id,
      organizationId: event.organization.id,
      eventType: event.type,
      sequence,
      body: JSON.stringify(body),
      state: endpoint.pausedAt ? 'paused' : 'pending',
      attempts: 0,
      createdAt: now,
      updatedAt: now,
    })
    if (!endpoint.pausedAt)
      await runtime.jobs.enqueue(tx, DELIVER_JOB, { deliveryId: id }, { id: `job.${id}` })
  }
}
