// Signed webhooks (issue 39): the event catalogue, the body's shape, the delivery headers and a
// verifier with no I/O, so an app's back end (Node, an edge function, a browser test) checks a
// delivery with the keys it fetched from the JWKS endpoint. The signature is Turnkey's published
// one: Ed25519 over `v1.ed25519.<kid>.<timestamp_ms>.<event_id>.<raw_body>`, hex in
// `X-Turnkey-Signature`, so a receiver written against Turnkey's recipe accepts Latchkey's.
import { ed25519 } from '@noble/curves/ed25519.js'
import { base64urlnopad, hex } from '@scure/base'

/** The delivery headers (lower case: fetch's `Headers` and Node's `req.headers` agree on it). */
export const WEBHOOK_HEADERS = {
  eventId: 'x-turnkey-event-id',
  eventType: 'x-turnkey-event-type',
  organizationId: 'x-turnkey-organization-id',
  timestamp: 'x-turnkey-timestamp',
  keyId: 'x-turnkey-signature-key-id',
  algorithm: 'x-turnkey-signature-algorithm',
  version: 'x-turnkey-signature-version',
  signature: 'x-turnkey-signature',
} as const

/** Where the service publishes its webhook signing keys (no authentication), as Turnkey does. */
export const WEBHOOK_JWKS_PATH = '/public/v1/discovery/webhooks/jwks'

/** The event types an endpoint may subscribe to: the published ones, then Latchkey's own. */
export const WEBHOOK_EVENT_TYPES = [
  'ACTIVITY_UPDATES',
  'SEND_TRANSACTION_STATUS_UPDATES',
  'LATCHKEY_SIGN_UP',
  'LATCHKEY_LOGIN',
  'LATCHKEY_WALLET_CREATED',
  'LATCHKEY_EXPORT',
  'LATCHKEY_POLICY_DENIED',
  'LATCHKEY_ENDPOINT_PAUSED',
  'LATCHKEY_SESSION_REVOKED',
  'LATCHKEY_MFA_SATISFIED',
  'LATCHKEY_SPENDING_LIMIT_REFUSED',
  'LATCHKEY_SPONSOR_BALANCE_LOW',
] as const

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** A subscription of an endpoint (the published `v1WebhookSubscriptionParams`). */
export interface WebhookSubscription {
  /** One of `WEBHOOK_EVENT_TYPES`. */
  eventType: string
  /**
   * JSON filter: `{"activityTypes":["ACTIVITY_TYPE_…"]}` (ACTIVITY_UPDATES), `{"statuses":["INCLUDED"]}`
   * (SEND_TRANSACTION_STATUS_UPDATES), `{"organizationIds":["…"]}` (any). Empty: every event of the type.
   */
  filtersJson?: string
  /** @default true */
  isActive?: boolean
}

/** An endpoint as the published `v1WebhookEndpointData`. */
export interface WebhookEndpoint {
  endpointId: string
  organizationId: string
  url: string
  name: string
  isActive: boolean
  subscriptions: WebhookSubscription[]
  /** Latchkey's: set when the service paused the endpoint after consecutive failures. */
  pausedAtMs?: string
}

/**
 * One delivery of one event to one endpoint (`latchkey_list_webhook_deliveries`, Latchkey's own):
 * its state and, once tried, the exact signed request last sent. No secret: the signature only
 * proves the body came from the service, and the receiver sees all of it anyway.
 */
export interface WebhookDelivery {
  /** `<eventId>.<endpointId>`. */
  deliveryId: string
  eventId: string
  eventType: WebhookEventType
  endpointId: string
  /** Where the event happened: the endpoint's organization or one of its sub-organizations. */
  organizationId: string
  sequence: number
  state: 'pending' | 'delivered' | 'failed' | 'paused'
  /** Tries made so far. */
  attempts: number
  /** The receiver's last HTTP status, if it answered. */
  lastStatus?: number
  /** How the last failed try ended: `http_error`, `network`, `timeout`, `refused`, `expired`, `endpoint_deleted`. */
  lastError?: string
  createdAtMs: string
  updatedAtMs: string
  deliveredAtMs?: string
  /** The body, exactly as signed on every try (the raw bytes a verifier checks, as UTF-8). */
  body: string
  /** The last request sent (absent before the first try): method, URL and every header, signature included. */
  request?: { method: 'POST'; url: string; headers: Record<string, string>; sentAtMs: string }
}

/** What each event's `data` holds: ids and statuses, never a secret, bundle, code or contact. */
export interface WebhookEventDataMap {
  ACTIVITY_UPDATES: {
    activityId: string
    /** `ACTIVITY_TYPE_…` as submitted. */
    activityType: string
    /** `ACTIVITY_STATUS_COMPLETED`, `_FAILED` or `_CONSENSUS_NEEDED`. */
    activityStatus: string
    /** Who submitted it. */
    userId: string
  }
  SEND_TRANSACTION_STATUS_UPDATES: {
    sendTransactionStatusId: string
    /** CAIP-2, e.g. `eip155:1`. */
    caip2: string
    /** `BROADCASTED`, `INCLUDED` or `FAILED` (a PENDING send between a replacement and its broadcast is no event) */
    status: string
    txHash?: string
  }
  LATCHKEY_SIGN_UP: { subOrganizationId: string; rootUserIds: string[]; walletId?: string }
  LATCHKEY_LOGIN: { userId: string; sessionType: string; credentialType: string }
  LATCHKEY_WALLET_CREATED: { walletId: string; addresses: string[] }
  LATCHKEY_EXPORT: {
    activityType: string
    userId: string
    walletId?: string
    privateKeyId?: string
    address?: string
  }
  LATCHKEY_POLICY_DENIED: { activityId: string; activityType: string; outcome: string; userId: string }
  LATCHKEY_ENDPOINT_PAUSED: { endpointId: string; consecutiveFailures: number }
  /**
   * A login session ended before its expiry: `logout` (its own key deleted), `deleted` (another
   * user's or an older session key deleted), `invalidate_existing` (a login ending the others),
   * `too_many_sessions` (a login past the live sessions a user may hold ending the oldest),
   * `credential_removed` (the passkey or API key that opened the session, or a renewal's first
   * session, removed from its user), `passkey_took_over` (a passkey proved itself by signing in to
   * an account only it gets into, a passkey sign-up's: the session keys whoever signed the account
   * up registered beside it end, since a registration proves nothing about who holds a passkey).
   */
  LATCHKEY_SESSION_REVOKED:
    | {
        userId: string
        /** The session's key (its API key id). */
        apiKeyId: string
        reason: 'logout' | 'deleted' | 'invalidate_existing' | 'too_many_sessions' | 'credential_removed'
        /** The activity that ended it. */
        activityId: string
      }
    | {
        userId: string
        /** The session's key (its API key id). */
        apiKeyId: string
        reason: 'passkey_took_over'
        /** The passkey whose sign-in ended it (no activity did: a stamp is checked before any is recorded). */
        authenticatorId: string
      }
  /** Every MFA step an activity waited for was proven; the activity runs (its ACTIVITY_UPDATES follows). */
  LATCHKEY_MFA_SATISFIED: { activityId: string; activityType: string; userId: string; policyIds: string[] }
  /** A signature refused by a spending limit (the activity is FAILED with SPENDING_LIMIT_EXCEEDED). */
  LATCHKEY_SPENDING_LIMIT_REFUSED: {
    activityId: string
    activityType: string
    userId: string
    spendingLimitId: string
    /** The limit, what was used in its window and what this signature would have spent (decimal units). */
    limit: string
    used: string
    requested: string
  }
  /**
   * A sponsor's balance went below the operator's threshold (sent once per crossing, per instance
   * watching it). `owner` is `default` (the service's sponsor, reported to every top-level
   * organization with an endpoint) or the organization the sponsor pays for.
   */
  LATCHKEY_SPONSOR_BALANCE_LOW: {
    owner: string
    caip2: string
    address: string
    /** Wei or lamports, decimal. */
    balance: string
    threshold: string
  }
}

/**
 * A delivery's body (`version` 1). `organizationId` is where it happened (a sub-organization's
 * events reach its parent's endpoints too); `sequence` counts this endpoint's events from 1, so a
 * receiver sees gaps and order; `id` is the event's, the same on every retry and redelivery.
 */
export interface WebhookEventBody<T extends WebhookEventType = WebhookEventType> {
  version: 1
  id: string
  type: T
  organizationId: string
  /** When it happened (epoch ms, decimal string as the activity API's timestamps). */
  createdAtMs: string
  endpointId: string
  sequence: number
  data: WebhookEventDataMap[T]
}

/** One key of the JWKS endpoint (RFC 7517 with Turnkey's two extra members). */
export interface WebhookJwk {
  kid: string
  kty: 'OKP'
  crv: 'Ed25519'
  alg: 'EdDSA'
  use: 'sig'
  /** The 32-byte public key, base64url. */
  x: string
  turnkey_signature_algorithm: 'ed25519'
  turnkey_signature_version: 'v1'
}

/** The signed bytes: `v1.ed25519.<kid>.<timestamp_ms>.<event_id>.` then the raw body. */
export function webhookSignedInput(input: {
  keyId: string
  timestampMs: string
  eventId: string
  body: Uint8Array
}): Uint8Array {
  const prefix = new TextEncoder().encode(`v1.ed25519.${input.keyId}.${input.timestampMs}.${input.eventId}.`)
  const bytes = new Uint8Array(prefix.length + input.body.length)
  bytes.set(prefix, 0)
  bytes.set(input.body, prefix.length)
  return bytes
}

/** The JWK of an Ed25519 public key. */
export function webhookJwk(keyId: string, publicKey: Uint8Array): WebhookJwk {
  return {
    kid: keyId,
    kty: 'OKP',
    crv: 'Ed25519',
    alg: 'EdDSA',
    use: 'sig',
    x: base64urlnopad.encode(publicKey),
    turnkey_signature_algorithm: 'ed25519',
    turnkey_signature_version: 'v1',
  }
}

export type WebhookVerification =
  | { ok: true; eventId: string; keyId: string; timestampMs: number }
  | {
      ok: false
      reason:
        | 'missing_header'
        | 'invalid_timestamp'
        | 'stale_timestamp'
        | 'unsupported_signature_version'
        | 'unsupported_signature_algorithm'
        | 'unknown_key'
        | 'invalid_signature'
        | 'event_id_mismatch'
        | 'endpoint_mismatch'
        | 'organization_mismatch'
        | 'header_mismatch'
      header?: string
    }

export interface VerifyWebhookInput {
  /** The raw body exactly as received (never re-serialised JSON). */
  body: string | Uint8Array
  /** fetch's `Headers`, or Node's `req.headers`. */
  headers: Headers | Record<string, string | string[] | undefined>
  /** The JWKS endpoint's answer (`{ keys }`) or its keys. */
  jwks:
    | { keys: readonly Pick<WebhookJwk, 'kid' | 'x' | 'crv'>[] }
    | readonly Pick<WebhookJwk, 'kid' | 'x' | 'crv'>[]
  /** @default Date.now() */
  now?: number
  /** How far the timestamp may be from `now`. @default 300000 (5 minutes) */
  toleranceMs?: number
  /**
   * This receiver's endpoint id: the body's `endpointId` must be it. One service key signs every
   * organization's deliveries, so without it another tenant's genuine delivery, posted to this
   * receiver within `toleranceMs`, verifies too.
   */
  endpointId?: string
  /**
   * The body's `organizationId` must be it. That is the organization where the event happened: a
   * parent organization's endpoint also gets its sub-organizations' events (sign-ups, their
   * wallets and sends), each naming the sub-organization, so an app receiving those passes
   * `endpointId` alone, which already binds a delivery to this receiver.
   */
  organizationId?: string
}

function headerOf(headers: VerifyWebhookInput['headers'], name: string): string | undefined {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers.get(name) ?? undefined
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>))
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value
  return undefined
}

/**
 * Checks a delivery: every header present, the timestamp within `toleranceMs` of `now`, the key
 * id among `jwks`, the Ed25519 signature over the signed input, and (when the body is JSON with an
 * `id`) that the body's event id is the signed header's, and its `type` and `organizationId` the
 * unsigned `X-Turnkey-Event-Type` and `X-Turnkey-Organization-Id` headers' when sent; given `endpointId` or `organizationId`,
 * that the body names them. No I/O: fetch the JWKS yourself (and
 * again when a key id is unknown: keys rotate). Deduplicate on `eventId` (delivery is at least once).
 */
export function verifyWebhook(input: VerifyWebhookInput): WebhookVerification {
  const values: Record<string, string> = {}
  for (const key of ['timestamp', 'eventId', 'keyId', 'algorithm', 'version', 'signature'] as const) {
    const value = headerOf(input.headers, WEBHOOK_HEADERS[key])
    if (!value) return { ok: false, reason: 'missing_header', header: WEBHOOK_HEADERS[key] }
    values[key] = value
  }
  const { timestamp, eventId, keyId, algorithm, version, signature } = values as Record<string, string>
  if (!/^[0-9]{1,16}$/.test(timestamp!)) return { ok: false, reason: 'invalid_timestamp' }
  const timestampMs = Number(timestamp)
  if (Math.abs((input.now ?? Date.now()) - timestampMs) > (input.toleranceMs ?? 300_000))
    return { ok: false, reason: 'stale_timestamp' }
  if (version !== 'v1') return { ok: false, reason: 'unsupported_signature_version' }
  if (algorithm !== 'ed25519') return { ok: false, reason: 'unsupported_signature_algorithm' }
  const keys = Array.isArray(input.jwks) ? input.jwks : (input.jwks as { keys: WebhookJwk[] }).keys
  const key = keys.find((candidate) => candidate.kid === keyId && candidate.crv === 'Ed25519')
  if (!key) return { ok: false, reason: 'unknown_key' }
  const body = typeof input.body === 'string' ? new TextEncoder().encode(input.body) : input.body
  let verified = false
  try {
    if (!/^[0-9a-f]{128}$/i.test(signature!)) return { ok: false, reason: 'invalid_signature' }
    verified = ed25519.verify(
      hex.decode(signature!.toLowerCase()),
      webhookSignedInput({ keyId: keyId!, timestampMs: timestamp!, eventId: eventId!, body }),
      base64urlnopad.decode(key.x),
    )
  } catch {
    verified = false
  }
  if (!verified) return { ok: false, reason: 'invalid_signature' }
  let parsed: { id?: unknown; type?: unknown; endpointId?: unknown; organizationId?: unknown } | undefined
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(body))
    if (value && typeof value === 'object') parsed = value
  } catch {
    // Not JSON: the signature covers it whole; nothing more to compare.
  }
  if (parsed && 'id' in parsed && parsed.id !== eventId) return { ok: false, reason: 'event_id_mismatch' }
  // The type and organization headers are not signed: a receiver that routes on them must see the
  // body's own values there, not ones a replayer swapped in.
  for (const [header, field] of [
    [WEBHOOK_HEADERS.eventType, 'type'],
    [WEBHOOK_HEADERS.organizationId, 'organizationId'],
  ] as const) {
    const value = headerOf(input.headers, header)
    if (value !== undefined && parsed && field in parsed && parsed[field] !== value)
      return { ok: false, reason: 'header_mismatch', header }
  }
  // Asked for, they must be there: a body without them is not this receiver's.
  if (input.endpointId !== undefined && parsed?.endpointId !== input.endpointId)
    return { ok: false, reason: 'endpoint_mismatch' }
  if (input.organizationId !== undefined && parsed?.organizationId !== input.organizationId)
    return { ok: false, reason: 'organization_mismatch' }
  return { ok: true, eventId: eventId!, keyId: keyId!, timestampMs }
}
