/**
 * What the service reports about itself as it runs: each subsystem emits named events with a small
 * payload (`runtime.emit('otp.sent', { channel: 'email' })`), and sinks (metrics, logs) turn them
 * into what operators read. A payload holds bounded values only: never a secret, code, token, key
 * or full contact address, and no ids where a sink could turn them into metric labels.
 *
 * Add the events of a subsystem to `ServiceEventMap` (name → payload); sinks see every event.
 */
export interface ServiceEventMap {
  // Durable jobs (jobs/JobQueue.ts); `kind` is a handler's name, `reason` a bounded code.
  /** A job ran to completion (and was deleted). */
  'job.done': { kind: string; attempts: number }
  /** A run failed; the job runs again after a backoff. */
  'job.retry': { kind: string; attempts: number; reason: string }
  /** A job failed for good (retries exhausted or a permanent failure); its row stays `failed`. */
  'job.failed': { kind: string; attempts: number; reason: string }
  /** A job whose worker's lease ran out (a crash) was claimed again. */
  'job.reclaimed': { kind: string }
  /** A run ended but its outcome could not be recorded (database out); the lease will expire. */
  'job.unrecorded': { kind: string }

  // Webhooks (webhooks/deliver.ts): one try of a delivery, and an endpoint paused after failing.
  /** `outcome`: delivered, http_error, network, timeout, refused (SSRF rules) or expired (retry window). */
  'webhooks.delivery': { outcome: string; endpointId: string; eventType: string }
  /** An endpoint failed `pauseThreshold` times in a row and was paused. */
  'webhooks.endpoint_paused': { endpointId: string; consecutiveFailures: number }
  /** The retention job deleted settled delivery rows (webhooks/retention.ts). */
  'webhooks.pruned': { deliveries: number }

  // OTP delivery (delivery/createDelivery.ts): never the code or the contact.
  /** A message was accepted by the SMTP server or the SMS provider. */
  'delivery.sent': { channel: 'email' | 'sms'; provider: 'smtp' | 'twilio' | 'webhook'; attempt: number }
  /** A try failed (`job.retry` or `job.failed` says what happens next); `reason` is a bounded code. */
  'delivery.failed': {
    channel: 'email' | 'sms'
    provider: 'smtp' | 'twilio' | 'webhook'
    reason: string
    attempt: number
  }
  /**
   * A try may have sent the message without the service knowing (a crash, a timeout, a connection
   * lost after the message was handed over): `resent` when it is sent again under the same
   * idempotency key, otherwise it is not sent again (at most once).
   */
  'delivery.uncertain': { channel: 'email' | 'sms'; provider: 'smtp' | 'twilio' | 'webhook'; resent: boolean }

  // Operations (h-ops): requests, activities, sign-in, store, crypto workers, drain.
  /** A request was answered (observability/observeRequests.ts). */
  'http.request': { family: RouteFamily; method: HttpMethod; status: number; seconds: number }
  /** A submitted activity was recorded (or found again: a replay), after its transaction committed. */
  'activity.recorded': {
    /** The activity's path, e.g. `sign_raw_payload` (the registry's names: bounded). */
    type: string
    /** `ACTIVITY_STATUS_COMPLETED`, `_FAILED`, `_CONSENSUS_NEEDED`, … */
    status: string
    /** The decision (`OUTCOME_ALLOW`, `OUTCOME_DENY_IMPLICIT`, …) or `REPLAY` for a replayed body. */
    outcome: string
    /** A failed activity's error code (`SPENDING_LIMIT_EXCEEDED`, …): a bounded set, never an id. */
    errorCode?: string
  }
  /** A step of an e-mail or SMS one-time code. */
  'signin.otp': {
    event: 'sent' | 'verified' | 'failed' | 'locked' | 'rate_limited'
    /** `unknown` for a refused code: its channel is in its record, which a refusal does not read out. */
    channel: 'email' | 'sms' | 'unknown'
  }
  /**
   * Login sessions ended before their expiry, after the activity that ended them committed:
   * `logout` (the session's own key deleted through `delete_api_keys`, how a client logs out),
   * `deleted` (another user's or an older session key deleted) or `invalidate_existing` (a login
   * that asked to end the user's other sessions) or `too_many_sessions` (a login past the live
   * sessions a user may hold, ending the oldest) or `credential_removed` (the passkey or API key
   * that opened the session removed) or `passkey_took_over` (a sign-up's session keys, ended as
   * its passkey proved itself in an account only it gets into).
   */
  'signin.sessions_revoked': {
    reason:
      | 'logout'
      | 'deleted'
      | 'invalidate_existing'
      | 'too_many_sessions'
      | 'credential_removed'
      | 'passkey_took_over'
    count: number
  }
  /** A transaction is rerun: a serialization conflict or a concurrent insert of the same key. */
  'store.retry': { reason: 'conflict' | 'unique' }
  /**
   * The database could not take a request (answered 503 STORAGE_UNAVAILABLE): `cause` is the
   * database's code and message (a lost connection, a statement past its timeout, a shutdown),
   * or the conflicts that outlasted the reruns; never a row's data.
   */
  'store.unavailable': { cause: string }
  /** A crypto job (signing, a new wallet) started on `runtime.crypto`. */
  'crypto.started': { kind: string }
  /** A crypto job ended. */
  'crypto.finished': { kind: string; outcome: 'ok' | 'error'; seconds: number }
  /** The server stopped taking requests and is finishing those in flight. */
  'server.draining': { inFlight: number }
  /** The drain ended: in-flight requests done (or cut at the deadline), jobs finished or handed back. */
  'server.drained': { seconds: number; cut: number }

  // ---- sending (sending/*) ----
  // `chain` is the CAIP-2 namespace of a chain family the service sends on (`eip155`, `solana`, or
  // one a `sendingWing({ senders })` added): bounded by the configuration.
  /**
   * A send was signed and recorded with its broadcast job, inside its activity's transaction: it
   * fires again when that transaction is run again (a conflict, a group rolled back), and for a
   * send whose transaction then rolls back. To count sends, count `activity.recorded` (once each,
   * after its commit), as the metrics do.
   */
  'send.signed': { chain: string; sponsored: boolean; calls: number }
  /**
   * A sponsored send was refused by a gas cap before signing, inside its activity's transaction (it
   * may fire once for each run of it, as `send.signed`); the metrics count `activity.recorded`'s
   * `GAS_CAP_EXCEEDED` instead.
   */
  'send.capExceeded': { cap: string }
  /** A node accepted a broadcast. */
  'send.broadcast': { chain: string; attempt: number }
  /** The node could not be reached; the send stays pending and is retried. */
  'send.rpcUnreachable': { chain: string; phase: 'broadcast' | 'track' }
  /** A send reached a final status; `ms` from commit to that status. */
  'send.final': { chain: string; status: 'INCLUDED' | 'FAILED' | 'CANCELLED'; ms: number }
  /** A stuck send was re-signed with higher fees (same nonce). */
  'send.replaced': { chain: 'eip155'; replacement: number }
  /**
   * A send past its replacements that the node no longer had (dropped from its pool, a restarted
   * node) was given to it again; `accepted`: whether the node took it (false: mined meanwhile,
   * known, or priced out, and the next pass looks again).
   */
  'send.rebroadcast': { chain: 'eip155'; accepted: boolean }
  /**
   * The open sends of one chain family in one status at a look of `start`'s backlog watch
   * (sending/sendBacklog.ts); `oldestSeconds` since the oldest was signed, 0 with none.
   */
  'send.backlog': { chain: string; status: 'PENDING' | 'BROADCASTED'; count: number; oldestSeconds: number }
  /**
   * A send has waited `STALLED_SECONDS` or more to be broadcast, where none had at the look before:
   * no instance broadcasts it (every one runs without the worker, or none reaches the node).
   * `count`: the sends that have waited that long; `workerHere`: whether this instance runs the worker.
   */
  'send.stalled': { chains: string[]; count: number; oldestSeconds: number; workerHere: boolean }
  /** No send waits `STALLED_SECONDS` to be broadcast any more (after `send.stalled`). */
  'send.unstalled': Record<string, never>
  /**
   * A sponsor account's balance was read (the sending wing's background watch); the metrics keep the
   * last one per sponsor and chain. `owner` is `default` or an organization id the operator
   * configured a sponsor for: bounded by the configuration, like `caip2`.
   */
  'sponsor.balance': {
    owner: string
    /** The chain family: `eip155` or `solana`. */
    family: string
    caip2: string
    /** Wei (EVM) or lamports (Solana), decimal. */
    balance: string
    /** Below the operator's threshold; null without one. */
    low: boolean | null
  }

  // Master-key rotation
  /** This instance seals new secrets under master-key `version` from now on (a rotation activated it). */
  'masterKey.sealing': { version: number }
  /** `rotate-master-key` re-sealed `count` secrets in one transaction. */
  'masterKey.resealed': { count: number }

  // Rate limits (pipeline/rateLimit.ts): which budget refused, on which entry.
  'rate_limit.refused': {
    limit: 'perKey' | 'perOrganization' | 'perClientAddress'
    /** `proxy`: an anonymous auth-proxy call (`/v1/*`), refused by its client address's budget. */
    kind: 'activity' | 'query' | 'proxy'
  }

  // Sign-in security (h-security): the auth proxy's CAPTCHA on otp_init (signin/proxy/otpInit.ts).
  /** A CAPTCHA token was checked at the provider's siteverify; `passed` lets the code skip the contact's send budget. */
  'otp.captcha': { provider: 'turnstile' | 'hcaptcha'; passed: boolean }
}

/** Where a request went, as a bounded label: the route families of the service. */
export type RouteFamily = 'submit' | 'query' | 'public' | 'proxy' | 'dev' | 'frame' | 'health' | 'other'

/** The request methods the service answers; anything else is `OTHER`. */
export type HttpMethod = 'GET' | 'POST' | 'OPTIONS' | 'HEAD' | 'OTHER'

export type ServiceEventName = keyof ServiceEventMap

/** Receives every event the service emits; must not throw and must not block. */
export interface EventSink {
  emit<K extends ServiceEventName>(name: K, data: ServiceEventMap[K]): void
}

/** A sink that drops everything (the default). */
export const silentSink: EventSink = { emit: () => undefined }

/** Several sinks as one: each gets every event; one that throws does not stop the others. */
export function fanOut(sinks: readonly EventSink[]): EventSink {
  if (sinks.length === 0) return silentSink
  if (sinks.length === 1) return sinks[0]!
  return {
    emit(name, data) {
      for (const sink of sinks)
        try {
          sink.emit(name, data)
        } catch {
          // A sink's failure is its own; the request it reports on goes on.
        }
    },
  }
}
