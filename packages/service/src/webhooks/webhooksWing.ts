import { WEBHOOK_JWKS_PATH } from '@latchkey/protocol'
import { registerAppEvents } from '../kernel/appEvents.ts'
import { PluginStateKey, type Runtime } from '../kernel/Runtime.ts'
import type { ServicePlugin } from '../kernel/registry.ts'
import type { WebhookEndpointRow } from '../kernel/store/model.ts'
import { type AddressPolicy, parseAllowList } from './addressPolicy.ts'
import { deliveryHandler, deliverySettings } from './deliver.ts'
import { endpointHandlers } from './endpointActivities.ts'
import { DELIVER_JOB, recordEvent } from './recordEvent.ts'
import { ensureSigningKey, publishedKeys } from './signingKeys.ts'
import type { WebhooksOptions } from './WebhooksOptions.ts'

/** What `createService` takes for the webhooks wing. */
export interface WebhooksWingOptions {
  /**
   * Signed webhooks (issue 39): events recorded with the activities that cause them, delivered
   * at least once by the job queue. Without `transport`, events are recorded and wait.
   * @default no transport: endpoints and events work, nothing is sent
   */
  webhooks?: WebhooksOptions
}

/** The wing's state: its options and address rules. */
export interface WebhooksState {
  options: WebhooksOptions
  policy: AddressPolicy
}

export const WEBHOOKS = new PluginStateKey<WebhooksState>('webhooks')

const policyOf = (runtime: Runtime, options: WebhooksOptions): AddressPolicy => {
  const production = runtime.options.mode === 'production'
  return {
    requireHttps: production,
    allowLoopback: options.allowLoopback ?? !production,
    allowList: options.allowList ?? [],
  }
}

/**
 * The webhooks wing: the endpoint activities and list query, the signing key (made at bootstrap,
 * sealed) and its JWKS endpoint, the app-event recorder other parts reach through
 * kernel/appEvents.ts, and (with a transport) the `webhooks.deliver` job handler.
 */
export function webhooksWing({
  webhooks: options = {},
}: WebhooksWingOptions = {}): ServicePlugin<WebhooksState> {
  parseAllowList(options.allowList ?? [])
  const handlers = endpointHandlers({
    policyOf: (runtime) => runtime.stateOf(WEBHOOKS).policy,
  })
  return {
    name: 'webhooks',
    activities: handlers.activities,
    queries: handlers.queries,
    // Every activity records its events with the endpoints read in its own transaction: a snapshot
    // run (PostgreSQL) reads its organization's endpoints and its parent's (found by the
    // organization's `parentOrganizationId` in the same statement) with everything else, at once.
    // An endpoint created after that read is not seen and the activity is ordered before it; one
    // seen that wants the event moves its sequence number, an update, so the run is a transaction.
    lookups: (organizationId) => [
      { table: 'webhookEndpoints', field: 'organizationId', value: organizationId },
      {
        table: 'webhookEndpoints',
        field: 'organizationId',
        from: { table: 'organizations', id: organizationId, column: 'parentOrganizationId' },
      },
    ],
    // An endpoint on ACTIVITY_UPDATES wants an event of every activity, and each moves its one
    // sequence number: on PostgreSQL concurrent activities would fail each other's commit on that
    // row (SERIALIZABLE) and rerun until some ran out of reruns (503). The process runs them one
    // at a time instead, on the key of the highest organization holding such an endpoint (the
    // parent's covers its sub-organizations' activities, and theirs own endpoints' rows too).
    async serializes({ organization, reads }) {
      for (const owner of [organization.parentOrganizationId, organization.id]) {
        if (owner === undefined) continue
        const endpoints = await reads.findBy('webhookEndpoints', 'organizationId', owner)
        if (endpoints.some(wantsEveryActivity)) return `webhooks:${owner}`
      }
      return undefined
    },
    async bootstrap(tx, runtime) {
      await ensureSigningKey(runtime, tx)
    },
    routes(app, runtime) {
      app.get(WEBHOOK_JWKS_PATH, async (c) =>
        c.json({ keys: await publishedKeys(runtime) }, 200, { 'cache-control': 'public, max-age=300' }),
      )
    },
    state: {
      key: WEBHOOKS,
      async load(runtime) {
        const state: WebhooksState = {
          options,
          policy: policyOf(runtime, options),
        }
        registerAppEvents(runtime, { record: (tx, event) => recordEvent(runtime, tx, event) })
        const { transport } = options
        if (transport)
          runtime.jobs.handle(
            DELIVER_JOB,
            deliveryHandler(runtime, deliverySettings({ ...options, transport }, state.policy)),
          )
        return state
      },
    },
    readiness(runtime) {
      // A failing receiver never makes the service unready. A production service given no
      // transport records events it never sends: the admin report says so.
      return options.transport || runtime.options.mode !== 'production'
        ? undefined
        : { webhooks: { delivering: false } }
    },
  }
}

/** An active endpoint (paused or not) with an active `ACTIVITY_UPDATES` subscription: every activity is an event for it. */
const wantsEveryActivity = (endpoint: WebhookEndpointRow): boolean =>
  endpoint.isActive && endpoint.subscriptions.some((s) => s.isActive && s.eventType === 'ACTIVITY_UPDATES')
