import {
  WEBHOOK_EVENT_TYPES,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEventType,
} from '@latchkey/protocol'
import { FieldError } from '../kernel/base/errors.ts'
import type { Reader } from '../kernel/Reader.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import { defineActivity, defineQuery } from '../kernel/registry.ts'
import type { WebhookDeliveryRow, WebhookEndpointRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Store.ts'
import { readPagination } from '../queries/paginate.ts'
import { type AddressPolicy, describeRefusal, policyForOrganization, refuseUrl } from './addressPolicy.ts'
import { isOn, withState } from './deliver.ts'
import { DELIVER_JOB, deliveryIdOf, jobIdOf } from './recordEvent.ts'
import { resumeEndpoint } from './resume.ts'
import { PRUNE_JOB, type RetentionSettings } from './retention.ts'

/** Endpoints one organization may have: each event is sent once per endpoint, so this bounds the fan-out. */
export const MAX_ENDPOINTS = 10
const MAX_SUBSCRIPTIONS = 20
const FILTER_KEYS = ['activityTypes', 'statuses', 'organizationIds'] as const

/** What the endpoint activities need of the wing: the address rules. */
export interface EndpointHost {
  policyOf(runtime: Runtime): AddressPolicy
  /** How long a deleted endpoint's delivery rows are kept. */
  retention: Pick<RetentionSettings, 'maxAgeMs'>
  /** Most deliveries that may wait on one endpoint (capBacklog.ts): a redelivery past it is refused. */
  maxWaiting: number
  /** Fans out what was recorded and not yet numbered (deliver.ts `fanOut`), before a listing. */
  fanOut(runtime: Runtime): Promise<unknown>
}

/** The published `v1WebhookEndpointData`. */
export function renderEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    endpointId: row.id,
    organizationId: row.organizationId,
    url: row.url,
    name: row.name,
    isActive: row.isActive,
    subscriptions: row.subscriptions.map((subscription) => ({
      eventType: subscription.eventType,
      ...(subscription.filtersJson ? { filtersJson: subscription.filtersJson } : {}),
      isActive: subscription.isActive,
    })),
    ...(row.pausedAt ? { pausedAtMs: String(row.pausedAt) } : {}),
  }
}

/**
 * One delivery as `latchkey_list_webhook_deliveries` answers it: state, body and the signed
 * request last sent. A delivery that waits is `paused` while its endpoint is off (turned off or
 * paused: nothing is written to the delivery, the endpoint's state stops it), else `pending`.
 */
export function renderDelivery(row: WebhookDeliveryRow, endpointOn = true): WebhookDelivery {
  const waiting = row.state === 'pending' || row.state === 'paused'
  return {
    deliveryId: row.id,
    eventId: row.eventId,
    eventType: row.eventType as WebhookEventType,
    endpointId: row.endpointId,
    organizationId: row.organizationId,
    sequence: row.sequence,
    state: waiting ? (endpointOn ? 'pending' : 'paused') : row.state,
    attempts: row.attempts,
    ...(row.lastStatus !== undefined ? { lastStatus: row.lastStatus } : {}),
    ...(row.lastError !== undefined ? { lastError: row.lastError } : {}),
    createdAtMs: String(row.createdAt),
    updatedAtMs: String(row.updatedAt),
    ...(row.deliveredAt !== undefined ? { deliveredAtMs: String(row.deliveredAt) } : {}),
    body: row.body,
    ...(row.lastRequest
      ? {
          request: {
            method: 'POST' as const,
            url: row.lastRequest.url,
            headers: row.lastRequest.headers,
            sentAtMs: String(row.lastRequest.sentAt),
          },
        }
      : {}),
  }
}

function readFilter(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string' || value.length > 4096)
    throw new FieldError({ field, reason: 'must be a JSON string of at most 4096 characters' })
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {
    throw new FieldError({ field, reason: 'must be JSON' })
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new FieldError({ field, reason: 'must be a JSON object' })
  for (const [key, list] of Object.entries(parsed)) {
    if (!(FILTER_KEYS as readonly string[]).includes(key))
      throw new FieldError({
        field,
        reason: `has an unknown filter ${key} (known: ${FILTER_KEYS.join(', ')})`,
      })
    if (
      !Array.isArray(list) ||
      list.length > 100 ||
      !list.every((item) => typeof item === 'string' && item.length <= 200)
    )
      throw new FieldError({ field, reason: `${key} must be a list of at most 100 strings` })
  }
  return JSON.stringify(parsed)
}

function readSubscriptions(reader: Reader): WebhookEndpointRow['subscriptions'] {
  return (
    reader.optArray(
      'subscriptions',
      (value, field) => {
        if (!value || typeof value !== 'object' || Array.isArray(value))
          throw new FieldError({ field, reason: 'must be an object' })
        const item = value as Record<string, unknown>
        if (!(WEBHOOK_EVENT_TYPES as readonly unknown[]).includes(item.eventType))
          throw new FieldError({
            field: `${field}.eventType`,
            reason: `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`,
          })
        if (item.isActive !== undefined && typeof item.isActive !== 'boolean')
          throw new FieldError({ field: `${field}.isActive`, reason: 'must be a boolean' })
        const filtersJson = readFilter(item.filtersJson, `${field}.filtersJson`)
        return {
          eventType: item.eventType as string,
          ...(filtersJson ? { filtersJson } : {}),
          isActive: item.isActive !== false,
        }
      },
      { max: MAX_SUBSCRIPTIONS },
    ) ?? []
  )
}

/** The endpoint of this organization, or 400 naming the field (another organization's is not found either). */
async function endpointOf(
  tx: Transaction,
  organizationId: string,
  endpointId: string,
): Promise<WebhookEndpointRow> {
  const row = await tx.get('webhookEndpoints', endpointId)
  if (!row || row.organizationId !== organizationId)
    throw new FieldError({
      field: 'parameters.endpointId',
      reason: 'names no webhook endpoint of this organization',
    })
  return row
}

/**
 * Deletes the endpoint `endpointId` in `tx` (`delete_webhook_endpoint`, and every endpoint of a
 * deleted sub-organization). Its deliveries' jobs find no endpoint and end; the rows stay as a
 * record for the retention window, then go (every one: nothing will send them).
 */
export async function deleteEndpoint(
  runtime: Runtime,
  tx: Transaction,
  endpointId: string,
  retention: Pick<RetentionSettings, 'maxAgeMs'>,
): Promise<void> {
  await tx.delete('webhookEndpoints', endpointId)
  await runtime.jobs.enqueue(
    tx,
    PRUNE_JOB,
    { endpointId },
    { id: `${PRUNE_JOB}.${endpointId}`, runAfter: runtime.now() + retention.maxAgeMs },
  )
}

/** The endpoint activities and the list query, reading the wing's address rules through `host`. */
export function endpointHandlers(host: EndpointHost) {
  const create = defineActivity('create_webhook_endpoint', {
    // The URL is checked in `run`, where the service's mode is known (the reader has no runtime).
    parse: (r) => ({
      url: r.string('url', { max: 2048 }),
      name: r.string('name', { max: 256 }),
      subscriptions: readSubscriptions(r),
    }),
    run: async (ctx, p) => {
      // The allow list is the operator's, for its own organizations' endpoints (addressPolicy.ts).
      const refusal = refuseUrl(p.url, policyForOrganization(host.policyOf(ctx.runtime), ctx.organization))
      if (refusal) throw new FieldError({ field: 'parameters.url', reason: describeRefusal(refusal) })
      const existing = await ctx.tx.findBy('webhookEndpoints', 'organizationId', ctx.organization.id)
      if (existing.length >= MAX_ENDPOINTS)
        throw new FieldError({
          field: 'parameters.url',
          reason: `cannot be added: this organization has ${MAX_ENDPOINTS} webhook endpoints (the most)`,
        })
      const row: WebhookEndpointRow = {
        id: ctx.newId(),
        organizationId: ctx.organization.id,
        url: p.url,
        name: p.name,
        isActive: true,
        subscriptions: p.subscriptions as WebhookEndpointRow['subscriptions'],
        sequence: 0,
        consecutiveFailures: 0,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      }
      await ctx.tx.put('webhookEndpoints', row)
      return { endpointId: row.id, webhookEndpoint: renderEndpoint(row) }
    },
  })
  const update = defineActivity('update_webhook_endpoint', {
    parse: (r) => ({
      endpointId: r.string('endpointId', { max: 200 }),
      url: r.optString('url', { max: 2048 }),
      name: r.optString('name', { max: 256 }),
      isActive: r.optBool('isActive'),
    }),
    run: async (ctx, p) => {
      const row = await endpointOf(ctx.tx, ctx.organization.id, p.endpointId)
      if (p.url !== undefined) {
        const refusal = refuseUrl(p.url, policyForOrganization(host.policyOf(ctx.runtime), ctx.organization))
        if (refusal) throw new FieldError({ field: 'parameters.url', reason: describeRefusal(refusal) })
      }
      // `isActive: true` also resumes an endpoint the service paused: its waiting deliveries go again, in order.
      const resume = p.isActive === true && (row.pausedAt !== undefined || !row.isActive)
      const { pausedAt: _, ...rest } = row
      const next: WebhookEndpointRow = {
        ...(resume ? rest : row),
        ...(p.url !== undefined ? { url: p.url } : {}),
        ...(p.name !== undefined ? { name: p.name } : {}),
        ...(p.isActive !== undefined ? { isActive: p.isActive } : {}),
        ...(resume ? { consecutiveFailures: 0 } : {}),
        updatedAt: ctx.now,
      }
      await ctx.tx.put('webhookEndpoints', next)
      // A few writes whatever waits: the resume's job restarts the waiting deliveries' retry
      // window a page at a time, and the head's job sends them all, in order (resume.ts).
      // `isActive: false` writes nothing more, as a pause: a run sending the endpoint reads it
      // before each try and stops at the first delivery it meets, which waits with the rest.
      if (resume) await resumeEndpoint(ctx.runtime, ctx.tx, row.id)
      return { endpointId: row.id, webhookEndpoint: renderEndpoint(next) }
    },
  })
  const remove = defineActivity('delete_webhook_endpoint', {
    parse: (r) => ({ endpointId: r.string('endpointId', { max: 200 }) }),
    run: async (ctx, p) => {
      const row = await endpointOf(ctx.tx, ctx.organization.id, p.endpointId)
      await deleteEndpoint(ctx.runtime, ctx.tx, row.id, host.retention)
      return { endpointId: row.id }
    },
  })
  const redeliver = defineActivity('latchkey_redeliver_webhook_event', {
    parse: (r) => ({
      eventId: r.string('eventId', { max: 300 }),
      endpointId: r.optString('endpointId', { max: 200 }),
    }),
    run: async (ctx, p) => {
      const deliveries = (await ctx.tx.findBy('webhookDeliveries', 'eventId', p.eventId)).filter(
        (row) => p.endpointId === undefined || row.endpointId === p.endpointId,
      )
      const endpointIds: string[] = []
      for (const delivery of deliveries) {
        // Only this organization's own endpoints: a parent's delivery of a sub-organization's event is the parent's.
        const endpoint = await ctx.tx.get('webhookEndpoints', delivery.endpointId)
        if (endpoint?.organizationId !== ctx.organization.id) continue
        // A delivery that no longer waits joins the queue again: not past the cap (the fan-out's
        // count, read in this SERIALIZABLE transaction, so a fan-out at once is ordered with it).
        if (
          delivery.waitingFor === undefined &&
          (await ctx.tx.count('webhookDeliveries', 'waitingFor', endpoint.id)) >= host.maxWaiting
        )
          throw new FieldError({
            field: p.endpointId !== undefined ? 'parameters.endpointId' : 'parameters.eventId',
            reason: `cannot be redelivered now: endpoint ${endpoint.id} already has ${host.maxWaiting} deliveries waiting (the most); resume it or let them go out first`,
          })
        await ctx.tx.put(
          'webhookDeliveries',
          withState(delivery, { state: 'pending', retryFrom: ctx.now, updatedAt: ctx.now }),
        )
        await ctx.runtime.jobs.enqueue(
          ctx.tx,
          DELIVER_JOB,
          { deliveryId: deliveryIdOf(delivery.eventId, delivery.endpointId) },
          { id: jobIdOf(delivery.id) },
        )
        endpointIds.push(endpoint.id)
      }
      if (endpointIds.length === 0)
        throw new FieldError({
          field: 'parameters.eventId',
          reason: 'names no event delivered to an endpoint of this organization',
        })
      return { eventId: p.eventId, endpointIds }
    },
  })
  const list = defineQuery('list_webhook_endpoints', {
    parse: () => ({}),
    run: async ({ store, organization }) => ({
      webhookEndpoints: (await store.findBy('webhookEndpoints', 'organizationId', organization.id))
        .sort((a, b) => a.createdAt - b.createdAt)
        .map(renderEndpoint),
    }),
  })
  const deliveries = defineQuery('latchkey_list_webhook_deliveries', {
    parse: (r) => ({
      endpointId: r.optString('endpointId', { max: 200 }),
      eventId: r.optString('eventId', { max: 300 }),
      pagination: readPagination(r),
    }),
    run: async ({ store, runtime, organization }, p) => {
      // Every event committed so far is listed: what waits to be fanned out is first (one
      // committed read when nothing does).
      await host.fanOut(runtime)
      // Only this organization's own endpoints: a parent's deliveries of a sub-organization's
      // events are the parent's to read, never the sub-organization's.
      const endpoints = await store.findBy('webhookEndpoints', 'organizationId', organization.id)
      const own = endpoints.map((endpoint) => endpoint.id)
      const on = new Set(endpoints.filter(isOn).map((endpoint) => endpoint.id))
      if (p.endpointId !== undefined && !own.includes(p.endpointId))
        throw new FieldError({
          field: 'endpointId',
          reason: 'names no webhook endpoint of this organization',
        })
      const endpointIds = p.endpointId !== undefined ? [p.endpointId] : own
      const limit = Number(p.pagination.limit)
      // The cursor is the last delivery of the page before: one of this listing's, or refused.
      let after: string | undefined
      if (p.pagination.after !== undefined) {
        const cursor = await store.get('webhookDeliveries', p.pagination.after)
        if (
          !cursor ||
          !endpointIds.includes(cursor.endpointId) ||
          (p.eventId !== undefined && cursor.eventId !== p.eventId)
        )
          throw new FieldError({
            field: 'paginationOptions.after',
            reason: 'names no delivery of this listing',
          })
        after = cursor.listKey
      }
      // Newest first (by when the event was recorded, then by id): one keyset page per endpoint
      // (the index on endpointId and listKey; at most MAX_ENDPOINTS of them), merged. An event's
      // deliveries are one per endpoint at most, read by the event's index.
      const pages =
        p.eventId !== undefined
          ? [
              (await store.findBy('webhookDeliveries', 'eventId', p.eventId)).filter(
                (row) => endpointIds.includes(row.endpointId) && (after === undefined || row.listKey < after),
              ),
            ]
          : await Promise.all(
              endpointIds.map((endpointId) =>
                runtime.store.pageBy('webhookDeliveries', {
                  field: 'endpointId',
                  value: endpointId,
                  by: 'listKey',
                  after,
                  limit,
                  descending: true,
                }),
              ),
            )
      const rows = pages
        .flat()
        .sort((a, b) => (a.listKey < b.listKey ? 1 : a.listKey > b.listKey ? -1 : 0))
        .slice(0, limit)
      return { webhookDeliveries: rows.map((row) => renderDelivery(row, on.has(row.endpointId))) }
    },
  })
  return {
    activities: {
      create_webhook_endpoint: create,
      update_webhook_endpoint: update,
      delete_webhook_endpoint: remove,
      latchkey_redeliver_webhook_event: redeliver,
    },
    queries: { list_webhook_endpoints: list, latchkey_list_webhook_deliveries: deliveries },
  }
}
