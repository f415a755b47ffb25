import { WEBHOOK_JWKS_PATH } from '@latchkey/protocol'
import { registerAppEvents } from '../kernel/appEvents.ts'
import { PluginStateKey, type Runtime } from '../kernel/Runtime.ts'
import type { ServicePlugin } from '../kernel/registry.ts'
import { type AddressPolicy, parseAllowList } from './addressPolicy.ts'
import { maxWaitingOf } from './capBacklog.ts'
import {
  busyDelayOf,
  deliveryHandler,
  deliverySettings,
  ensureSender,
  FANOUT_KIND,
  fanOut,
  fanOutFeeder,
} from './deliver.ts'
import { deleteEndpoint, endpointHandlers } from './endpointActivities.ts'
import { DELIVER_JOB, RESUME_JOB, recordEvent } from './recordEvent.ts'
import { resumeHandler } from './resume.ts'
import {
  PRUNE_JOB,
  pruneHandler,
  pruneScheduler,
  type RetentionSettings,
  retentionSettings,
} from './retention.ts'
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
  retention: RetentionSettings
}

export const WEBHOOKS = new PluginStateKey<WebhooksState>('webhooks')

const policyOf = (runtime: Runtime, options: WebhooksOptions): AddressPolicy => {
  const production = runtime.options.mode === 'production'
  return {
    requireHttps: production,
    allowLoopback: options.allowLoopback ?? !production,
    // `dev`'s loopback is every organization's (the developer's own receivers); loopback the
    // operator turned on is for its own organizations' receivers, as the allow list is.
    loopbackTopLevelOnly: options.allowLoopback === true,
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
  const retention = retentionSettings(options.retention)
  const maxWaiting = maxWaitingOf(options)
  const handlers = endpointHandlers({
    policyOf: (runtime) => runtime.stateOf(WEBHOOKS).policy,
    retention,
    maxWaiting,
    fanOut: (runtime) => fanOut(runtime, { deliver: Boolean(options.transport), maxWaiting }),
  })
  return {
    name: 'webhooks',
    activities: handlers.activities,
    queries: handlers.queries,
    // Every activity records its events with the endpoints read in its own transaction: a snapshot
    // run (PostgreSQL) reads its organization's endpoints and its parent's (found by the
    // organization's `parentOrganizationId` in the same statement) with everything else, at once.
    // An endpoint created after that read is not seen and the activity is ordered before it. The
    // events only add rows (numbered later, by the endpoint's sender: deliver.ts), so the activity
    // stays a snapshot run and concurrent ones never wait for each other.
    lookups: (organizationId) => [
      { table: 'webhookEndpoints', field: 'organizationId', value: organizationId },
      {
        table: 'webhookEndpoints',
        field: 'organizationId',
        from: { table: 'organizations', id: organizationId, column: 'parentOrganizationId' },
      },
    ],
    // A deleted sub-organization's endpoints go with it, as `delete_webhook_endpoint` deletes one:
    // nobody could list, change or delete them afterwards, and nothing more is sent to them (its
    // waiting deliveries' jobs find no endpoint and end; its own deletion's event is recorded
    // after this, with no endpoint of it left to name). The parent's endpoints stay.
    async forget(tx, { organizationId }, runtime) {
      if (organizationId === undefined) return
      for (const endpoint of await tx.findBy('webhookEndpoints', 'organizationId', organizationId))
        await deleteEndpoint(runtime, tx, endpoint.id, retention)
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
          retention,
        }
        registerAppEvents(runtime, { record: (tx, event) => recordEvent(runtime, tx, event) })
        // Events become numbered deliveries in the job worker's ticks, a batch at a time (and
        // with no transport too: they wait, listed, for a start with one).
        runtime.jobs.feed(
          FANOUT_KIND,
          fanOutFeeder(runtime, {
            deliver: Boolean(options.transport),
            busyDelayMs: busyDelayOf(options),
            maxWaiting,
          }),
        )
        const schedulePrune = pruneScheduler(runtime, retention)
        runtime.jobs.handle(PRUNE_JOB, pruneHandler(runtime, retention, schedulePrune, maxWaiting))
        // Resuming an endpoint restarts its waiting deliveries' retry window a page at a time.
        runtime.jobs.handle(RESUME_JOB, resumeHandler(runtime))
        const { transport } = options
        if (transport)
          runtime.jobs.handle(
            DELIVER_JOB,
            deliveryHandler(runtime, {
              ...deliverySettings({ ...options, transport }, state.policy),
              afterRun: schedulePrune,
            }),
          )
        return state
      },
    },
    start(runtime) {
      // Deliveries recorded while no transport was configured have no job: one sender per
      // endpoint that has some (in the background; a redundant one finds nothing to do).
      if (!options.transport) return undefined
      let stopped = false
      void (async () => {
        for (let afterId = ''; !stopped; ) {
          const endpoints = await runtime.store.page('webhookEndpoints', { afterId, limit: 100 })
          for (const endpoint of endpoints) if (!stopped) await ensureSender(runtime, endpoint.id)
          if (endpoints.length < 100) return
          afterId = endpoints.at(-1)!.id
        }
      })().catch(() => undefined)
      return () => {
        stopped = true
      }
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
