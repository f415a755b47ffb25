import type { RefusalReason } from './addressPolicy.ts'

/** One signed POST, as the wing hands it to the transport. */
export interface WebhookRequest {
  url: string
  headers: Record<string, string>
  body: Uint8Array
  /** Refuses an address the name resolved to (called on each address, before connecting to it). */
  refuse(address: string): RefusalReason | undefined
  /**
   * The host may be looked up by the system resolver (the hosts file, search domains): the endpoint
   * is a top-level organization's (the operator's) and the operator lets internal receivers through
   * (`allowList`, `allowLoopback: true`). Any other host is asked of DNS directly: a system lookup
   * holds one of the few thread-pool slots every other host-name lookup of the process needs,
   * for as long as the name's DNS server takes, whatever the try's timeout.
   */
  systemLookup?: boolean
  /** Connecting, the host's lookup included (and any wait for a lookup slot). */
  connectTimeoutMs: number
  /** The whole request: connect, send, status and the (capped) body. */
  timeoutMs: number
  /** Bytes of the response body read at most (the rest is dropped). */
  maxResponseBytes: number
  signal: AbortSignal
}

/** What came back (a redirect is an answer like any other: never followed). */
export interface WebhookResponse {
  status: number
  /** At most `maxResponseBytes`, as text. */
  body: string
}

/**
 * Sends a request to the address it checked: resolves the host (never holding what the process's
 * other lookups need, unless `systemLookup`), refuses any address
 * `request.refuse` refuses, connects to the checked address itself (pinned: no second lookup),
 * follows no redirect. Node's is `nodeWebhookTransport()` from `@latchkey/service/node`; a
 * refusal throws `WebhookRefusedError`.
 */
export type WebhookTransport = (request: WebhookRequest) => Promise<WebhookResponse>

/** Thrown by a transport for an address the policy refuses (after DNS). */
export class WebhookRefusedError extends Error {
  override name = 'WebhookRefusedError'
  constructor(readonly reason: RefusalReason) {
    super(`refused: ${reason} address`)
  }
}

/** The webhooks wing's options (`createService({ webhooks })`, `[webhooks]` in the configuration). */
export interface WebhooksOptions {
  /**
   * How deliveries are sent. Without one, events are still recorded (with their deliveries) and
   * wait: `latchkey-service start` and `dev` pass `nodeWebhookTransport()`.
   */
  transport?: WebhookTransport
  /** How long a delivery is retried (exponential backoff) before it fails for good. @default 86400000 (24 h) */
  retryWindowMs?: number
  /** Failed deliveries in a row after which the endpoint is paused. @default 20 */
  pauseThreshold?: number
  /**
   * Loopback receivers allowed (`localhost`, 127.0.0.0/8, ::1). Left unset in `dev`, every
   * organization's endpoints may reach them; set to `true`, only top-level organizations' (the
   * operator's own), never a sub-organization's. @default true in `dev`, false in production
   */
  allowLoopback?: boolean
  /** CIDRs or addresses of internal receivers allowed although not public. @default [] */
  allowList?: readonly string[]
  /** @default 5000 */
  connectTimeoutMs?: number
  /** @default 10000 */
  timeoutMs?: number
  /** @default 4096 */
  maxResponseBytes?: number
  /**
   * How long a delivery may wait while the service is busy serving requests (32 or more in
   * flight): it is fanned out and sent once the service is quiet, or once it is this old, so a
   * burst of requests is answered first and its webhooks follow it, and under a load that lasts
   * every delivery still goes out this late at most. 0 sends at once, busy or not.
   * @default 10000 (10 s; at most 10 s, which keeps a job's run within its lease)
   */
  busyDelayMs?: number
  /**
   * Most deliveries that may wait on one endpoint (pending, or paused while it is turned off or
   * paused by the service). An event fanned out to an endpoint already holding this many drops
   * the oldest that wait, in the same transaction: each is settled `failed` with `lastError:
   * 'backlog_full'` (listed by `latchkey_list_webhook_deliveries`, redeliverable while kept) and
   * counted as `latchkey_webhook_deliveries_total{outcome="dropped"}`; the receiver sees the gap
   * in `sequence`. A redelivery to an endpoint this full is refused (400). @default 10000
   */
  maxWaitingPerEndpoint?: number
  /**
   * How long delivery rows are kept: settled ones (delivered, failed) older than `maxAgeMs`, or
   * beyond the newest `maxPerEndpoint` of their endpoint, are deleted by a durable job every
   * `intervalMs`; a delivery still waiting to be sent or retried never is. A deleted endpoint's
   * rows go `maxAgeMs` after it.
   * @default { maxAgeMs: 604800000 (7 days), maxPerEndpoint: 10000, intervalMs: 3600000 (1 h) }
   */
  retention?: { maxAgeMs?: number; maxPerEndpoint?: number; intervalMs?: number }
}

export const WEBHOOK_DEFAULTS = {
  retryWindowMs: 24 * 60 * 60_000,
  pauseThreshold: 20,
  connectTimeoutMs: 5000,
  timeoutMs: 10_000,
  maxResponseBytes: 4096,
  busyDelayMs: 10_000,
}
