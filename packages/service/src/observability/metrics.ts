// Node only (prom-client): the service's Prometheus metrics, fed by its events.
import { WEBHOOK_EVENT_TYPES } from '@latchkey/protocol'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { EventSink, ServiceEventMap, ServiceEventName } from '../kernel/base/events.ts'

/** The activities whose completion issues a session, by the sign-in method they stand for. */
const SESSION_ACTIVITIES: Record<string, string> = {
  otp_login: 'otp',
  oauth_login: 'oauth',
  stamp_login: 'stamp',
  create_read_only_session: 'read_only',
}

/** Request durations: a probe takes a millisecond, a signature tens, a slow database seconds. */
/** An event type as a label: one of the catalogue's, else `other` (a label never takes an unbounded value). */
const eventTypeLabel = (type: string) =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type) ? type : 'other'

const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const CRYPTO_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

/** What the metrics read at scrape time from the running server and its store. */
export interface MetricsSources {
  /** Requests being served right now. */
  inFlight?: () => number
  /** The database pool's use (`Store.poolUse`). */
  poolUse?: () => { total: number; idle: number; waiting: number; max: number }
  /** True while the server drains. */
  draining?: () => boolean
  /** Requests merged into shared statements (PostgreSQL) or commits (SQLite; PostgreSQL under one lock) so far (`Store.batching`). */
  batching?: () => Partial<Record<'lookups' | 'inserts' | 'commits', { batches: number; items: number }>>
}

export interface Metrics extends EventSink {
  /** The registry the admin listener's `GET /metrics` renders. */
  readonly registry: Registry
  /** Gauges read at scrape time (set once the server and store exist). */
  watch(sources: MetricsSources): void
  /** The Prometheus text exposition of every metric. */
  render(): Promise<string>
  /** Its `Content-Type`. */
  readonly contentType: string
}

export interface MetricsOptions {
  /** Also collect Node's process metrics (CPU, memory, event-loop lag, handles). @default true */
  process?: boolean
}

/**
 * The service's metrics in a registry of their own (several services in one process do not mix),
 * as an event sink: pass it in `createService({ events })`. Every label is bounded: route family,
 * method, status, activity type (the registry's paths), outcome, sign-in step and channel; never an
 * id, an address or a contact.
 */
/** The error codes of a spending limit's refusal (limits/spendGuard.ts, limits/spendOf.ts). */
const SPEND_REFUSALS: ReadonlySet<string> = new Set([
  'SPENDING_LIMIT_EXCEEDED',
  'SPEND_UNDECODABLE',
  'SPEND_DESTINATION_NOT_ALLOWED',
])

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry()
  if (options.process ?? true) collectDefaultMetrics({ register: registry })
  const registers = [registry]
  const requests = new Counter({
    name: 'latchkey_http_requests_total',
    help: 'Requests answered, by route family, method and status',
    labelNames: ['family', 'method', 'status'] as const,
    registers,
  })
  const requestSeconds = new Histogram({
    name: 'latchkey_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer, by route family',
    labelNames: ['family'] as const,
    buckets: REQUEST_BUCKETS,
    registers,
  })
  const activities = new Counter({
    name: 'latchkey_activities_total',
    help: 'Activities recorded, by type, final status and decision (policy outcome, consensus, REPLAY)',
    labelNames: ['type', 'status', 'outcome'] as const,
    registers,
  })
  const otp = new Counter({
    name: 'latchkey_signin_otp_total',
    help: 'One-time codes sent, verified, refused (failed), locked after too many wrong codes or rate limited',
    labelNames: ['event', 'channel'] as const,
    registers,
  })
  const sessions = new Counter({
    name: 'latchkey_signin_sessions_issued_total',
    help: 'Sessions issued, by sign-in method',
    labelNames: ['method'] as const,
    registers,
  })
  const revoked = new Counter({
    name: 'latchkey_signin_sessions_revoked_total',
    help: "Login sessions ended before their expiry: logout, deleted (by a root user or an older key), invalidate_existing (a login ending the others), too_many_sessions (a login past the live sessions a user may hold ending the oldest), credential_removed (the passkey or API key that opened the session removed), passkey_took_over (a sign-up's session keys, ended as its passkey proved itself in an account only it gets into)",
    labelNames: ['reason'] as const,
    registers,
  })
  const retries = new Counter({
    name: 'latchkey_store_transaction_retries_total',
    help: 'Transactions rerun after a serialization conflict or a concurrent insert of the same key',
    labelNames: ['reason'] as const,
    registers,
  })
  const unavailable = new Counter({
    name: 'latchkey_store_unavailable_total',
    help: 'Transactions refused because the database could not take them (answered 503)',
    registers,
  })
  const cryptoQueued = new Gauge({
    name: 'latchkey_crypto_jobs_in_flight',
    help: 'Crypto jobs (signing, new wallets) queued or running on the worker threads',
    registers,
  })
  const cryptoSeconds = new Histogram({
    name: 'latchkey_crypto_job_duration_seconds',
    help: 'Time of a crypto job from submission to result, queueing included, by kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    buckets: CRYPTO_BUCKETS,
    registers,
  })
  const drains = new Counter({
    name: 'latchkey_server_drains_total',
    help: 'Drains begun (SIGTERM or SIGINT)',
    registers,
  })
  const cut = new Counter({
    name: 'latchkey_server_drain_cut_requests_total',
    help: 'Requests still in flight when a drain reached its deadline (their connections were closed)',
    registers,
  })
  const delivery = new Counter({
    name: 'latchkey_delivery_jobs_total',
    help: 'Delivery jobs (e-mail, SMS) by what happened to them: sent, failed, retried, handed back',
    labelNames: ['event'] as const,
    registers,
  })
  const webhookTries = new Counter({
    name: 'latchkey_webhook_deliveries_total',
    help: 'Webhook delivery tries per event type and outcome (delivered, http_error, network, timeout, refused, expired); bounded labels: an endpoint is a tenant\u2019s, its id is in the delivery rows, never a label',
    labelNames: ['event_type', 'outcome'] as const,
    registers,
  })
  const webhookPauses = new Counter({
    name: 'latchkey_webhook_endpoints_paused_total',
    help: 'Webhook endpoints paused after failing pause_threshold times in a row (which ones: list_webhook_endpoints, pausedAtMs)',
    labelNames: [] as const,
    registers,
  })
  const webhookPruned = new Counter({
    name: 'latchkey_webhook_deliveries_pruned_total',
    help: 'Settled webhook delivery rows deleted by the retention job ([webhooks] retention_days, retention_per_endpoint)',
    labelNames: [] as const,
    registers,
  })
  const rateLimited = new Counter({
    name: 'latchkey_rate_limited_total',
    help: 'Requests refused with 429, by the budget that refused them (perKey, perOrganization, perClientAddress) and kind (activity, query, or proxy: an auth-proxy call)',
    labelNames: ['limit', 'kind'] as const,
    registers,
  })
  // Spending limits and session profiles (issue 37): refusals by code and activity, never by limit.
  const spendRefusals = new Counter({
    name: 'latchkey_spend_refusals_total',
    help: 'Signatures refused by a spending limit, by code (SPENDING_LIMIT_EXCEEDED, SPEND_UNDECODABLE, SPEND_DESTINATION_NOT_ALLOWED) and activity type',
    labelNames: ['code', 'type'] as const,
    registers,
  })
  const scopeRefusals = new Counter({
    name: 'latchkey_session_scope_refusals_total',
    help: "Activities of a session-profile session refused as outside the profile's scope, by activity type",
    labelNames: ['type'] as const,
    registers,
  })
  // Sends (sending/*), as the send worker and `start`'s backlog watch see them (a send signed is an
  // activity: `latchkey_activities_total`); `chain` is a chain family's CAIP-2 namespace.
  const sendBroadcasts = new Counter({
    name: 'latchkey_send_broadcasts_total',
    help: 'Broadcasts a node accepted (a send broadcast again after a lost answer counts again)',
    labelNames: ['chain'] as const,
    registers,
  })
  const sendRebroadcasts = new Counter({
    name: 'latchkey_send_rebroadcasts_total',
    help: 'Stuck sends past their replacements that the node no longer had, given to it again',
    labelNames: ['chain', 'accepted'] as const,
    registers,
  })
  const sendReplacements = new Counter({
    name: 'latchkey_send_replacements_total',
    help: 'Stuck sends re-signed with higher fees under the same nonce',
    labelNames: ['chain'] as const,
    registers,
  })
  const sendsFinal = new Counter({
    name: 'latchkey_sends_final_total',
    help: 'Sends that reached a final status (INCLUDED or FAILED), counted once across instances',
    labelNames: ['chain', 'status'] as const,
    registers,
  })
  const sendSeconds = new Histogram({
    name: 'latchkey_send_final_seconds',
    help: 'Time from a send being committed to its final status',
    labelNames: ['chain', 'status'] as const,
    buckets: [1, 2.5, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600],
    registers,
  })
  const sendUnreachable = new Counter({
    name: 'latchkey_send_rpc_unreachable_total',
    help: "Calls of the send worker a chain's node did not answer (the send stays open and is retried), by phase (broadcast, track)",
    labelNames: ['chain', 'phase'] as const,
    registers,
  })
  const sendCapRefusals = new Counter({
    name: 'latchkey_send_cap_refusals_total',
    help: "Sponsored sends refused by a gas cap or the sponsor's fee ceiling before signing (GAS_CAP_EXCEEDED), by activity type",
    labelNames: ['type'] as const,
    registers,
  })
  const sendsOpen = new Gauge({
    name: 'latchkey_sends_open',
    help: "Sends not yet final at the backlog watch's last look (start only): PENDING waits to be broadcast, BROADCASTED to be mined",
    labelNames: ['chain', 'status'] as const,
    registers,
  })
  const sendsOldest = new Gauge({
    name: 'latchkey_sends_oldest_open_seconds',
    help: "Seconds since the oldest of those sends was signed, at the backlog watch's last look (0 with none)",
    labelNames: ['chain', 'status'] as const,
    registers,
  })
  let sources: MetricsSources = {}
  new Gauge({
    name: 'latchkey_http_requests_in_flight',
    help: 'Requests being served',
    registers,
    collect() {
      this.set(sources.inFlight?.() ?? 0)
    },
  })
  new Gauge({
    name: 'latchkey_server_draining',
    help: '1 while the server drains (readiness answers 503), else 0',
    registers,
    collect() {
      this.set(sources.draining?.() ? 1 : 0)
    },
  })
  new Gauge({
    name: 'latchkey_store_pool_connections',
    help: 'Database pool connections: open (total), idle, requests waiting for one, and the pool size (max)',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const use = sources.poolUse?.()
      if (!use) return
      for (const state of ['total', 'idle', 'waiting', 'max'] as const) this.set({ state }, use[state])
    },
  })

  // The sponsors' balances as last read (`sponsor.balance` events: a scrape makes no RPC call).
  // Labels: the owner (`default` or an organization id the operator configured), family and chain:
  // bounded by the configuration.
  const sponsorLabels = ['owner', 'family', 'caip2'] as const
  const sponsorBalances = new Gauge({
    name: 'latchkey_sponsor_balance',
    help: 'Balance of each sponsor account as last read, in wei (EVM) or lamports (Solana); absent until read',
    labelNames: sponsorLabels,
    registers,
  })
  const sponsorLow = new Gauge({
    name: 'latchkey_sponsor_balance_low',
    help: '1 while a sponsor account holds less than low_balance_wei / low_balance_lamports, else 0 (absent without a threshold)',
    labelNames: sponsorLabels,
    registers,
  })

  // What the store's batching did: PostgreSQL's statements, SQLite's commits and PostgreSQL's lock groups' commits, and the requests they carried.
  for (const [name, help, field] of [
    [
      'latchkey_store_batches_total',
      'Statements that carried the reads ahead (lookups) or the inserts of concurrent requests together (PostgreSQL), or commits that carried their transactions (commits: SQLite, and PostgreSQL for the transactions queued for one lock)',
      'batches',
    ],
    [
      'latchkey_store_batched_requests_total',
      'Requests whose reads ahead (lookups) or inserts went in those statements; divided by latchkey_store_batches_total, requests per statement',
      'items',
    ],
  ] as const)
    new Counter({
      name,
      help,
      labelNames: ['kind'] as const,
      registers,
      collect() {
        const counts = sources.batching?.()
        if (!counts) return
        this.reset()
        for (const kind of ['lookups', 'inserts', 'commits'] as const) {
          const count = counts[kind]
          if (count) this.inc({ kind }, count[field])
        }
      },
    })

  // Partial: events of subsystems with no metric of their own still reach the log sink.
  const handlers: { [K in ServiceEventName]?: (data: ServiceEventMap[K]) => void } = {
    'http.request': ({ family, method, status, seconds }) => {
      requests.inc({ family, method, status })
      requestSeconds.observe({ family }, seconds)
    },
    'activity.recorded': ({ type, status, outcome, errorCode }) => {
      if (errorCode && outcome !== 'REPLAY') {
        if (SPEND_REFUSALS.has(errorCode)) spendRefusals.inc({ code: errorCode, type })
        else if (errorCode === 'SESSION_SCOPE_DENIED') scopeRefusals.inc({ type })
        else if (errorCode === 'GAS_CAP_EXCEEDED') sendCapRefusals.inc({ type })
      }
      activities.inc({
        type,
        status: status.replace('ACTIVITY_STATUS_', ''),
        outcome: outcome.replace('OUTCOME_', ''),
      })
      const method = SESSION_ACTIVITIES[type]
      if (method && status === 'ACTIVITY_STATUS_COMPLETED' && outcome !== 'REPLAY') sessions.inc({ method })
    },
    'signin.otp': ({ event, channel }) => otp.inc({ event, channel }),
    'signin.sessions_revoked': ({ reason, count }) => revoked.inc({ reason }, count),
    'store.retry': ({ reason }) => retries.inc({ reason }),
    'store.unavailable': () => unavailable.inc(),
    'crypto.started': () => cryptoQueued.inc(),
    'crypto.finished': ({ kind, outcome, seconds }) => {
      cryptoQueued.dec()
      cryptoSeconds.observe({ kind, outcome }, seconds)
    },
    'rate_limit.refused': ({ limit, kind }) => rateLimited.inc({ limit, kind }),
    // Endpoints are few per organization (at most 10), so the endpoint id is a bounded label.
    'webhooks.delivery': ({ eventType, outcome }) =>
      webhookTries.inc({ event_type: eventTypeLabel(eventType), outcome }),
    'webhooks.endpoint_paused': () => webhookPauses.inc(),
    'webhooks.pruned': ({ deliveries }) => webhookPruned.inc(deliveries),
    'server.draining': () => drains.inc(),
    'server.drained': ({ cut: count }) => cut.inc(count),
    'send.broadcast': ({ chain }) => sendBroadcasts.inc({ chain }),
    'send.replaced': ({ chain }) => sendReplacements.inc({ chain }),
    'send.rebroadcast': ({ chain, accepted }) => sendRebroadcasts.inc({ chain, accepted: String(accepted) }),
    'send.final': ({ chain, status, ms }) => {
      sendsFinal.inc({ chain, status })
      sendSeconds.observe({ chain, status }, ms / 1000)
    },
    'send.rpcUnreachable': ({ chain, phase }) => sendUnreachable.inc({ chain, phase }),
    'send.backlog': ({ chain, status, count, oldestSeconds }) => {
      sendsOpen.set({ chain, status }, count)
      sendsOldest.set({ chain, status }, oldestSeconds)
    },
    'sponsor.balance': ({ owner, family, caip2, balance, low }) => {
      sponsorBalances.set({ owner, family, caip2 }, Number(balance))
      if (low === null) sponsorLow.remove({ owner, family, caip2 })
      else sponsorLow.set({ owner, family, caip2 }, low ? 1 : 0)
    },
  }

  return {
    registry,
    contentType: registry.contentType,
    emit(name, data) {
      const handler = handlers[name] as ((data: ServiceEventMap[typeof name]) => void) | undefined
      if (handler) handler(data)
      // The delivery queue's events are `delivery.<what happened>`: one counter, the name as label.
      else if (name.startsWith('delivery.')) delivery.inc({ event: name.slice('delivery.'.length) })
    },
    watch(next) {
      sources = { ...sources, ...next }
    },
    render: () => registry.metrics(),
  }
}
