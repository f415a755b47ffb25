import type {
  Activity,
  AuthenticationMethod,
  AuthenticationType,
  SpendingLimitExceededDetails,
} from '@latchkey/protocol'
import {
  ERROR_CODES,
  type ErrorBody,
  type ErrorCode,
  isErrorBody,
  SESSION_KEY_MESSAGES,
} from '@latchkey/protocol'
import { LatchkeyError } from './baseErrors.ts'

export {
  ConfigInvalidError,
  KeyStoreUnavailableError,
  LatchkeyError,
  type LatchkeyErrorOptions,
} from './baseErrors.ts'

/** Any error answered by the service (activity API or auth proxy) as `{ code, message, details }`. */
export class ServiceError extends LatchkeyError {
  override name = 'ServiceError'
}

export class NetworkError extends LatchkeyError {
  override name = 'NetworkError'
  constructor(url: string, cause?: unknown) {
    super(`Request to ${url} failed: ${cause instanceof Error ? cause.message : 'network error'}`, {
      code: 'NETWORK_ERROR',
      details: { url },
      cause,
    })
  }
}

export class TimeoutError extends LatchkeyError {
  override name = 'TimeoutError'
  constructor(url: string, timeoutMs: number) {
    super(`Request to ${url} timed out after ${timeoutMs} ms`, {
      code: 'TIMEOUT',
      details: { url, timeoutMs },
    })
  }
}

export class AbortedError extends LatchkeyError {
  override name = 'AbortedError'
  constructor(cause?: unknown) {
    super('The operation was aborted', { code: 'ABORTED', cause })
  }
}

export class KeyNotFoundError extends LatchkeyError {
  override name = 'KeyNotFoundError'
  constructor(publicKey: string) {
    super(`No private key for ${publicKey} in the key store (it may have been evicted)`, {
      code: 'KEY_NOT_FOUND',
      details: { publicKey },
    })
  }
}

export class NotSignedInError extends LatchkeyError {
  override name = 'NotSignedInError'
  constructor(message = 'Sign in first: there is no usable session') {
    super(message, { code: 'NOT_SIGNED_IN' })
  }
}

export class SessionExpiredError extends LatchkeyError {
  override name = 'SessionExpiredError'
  constructor(sessionId: string) {
    super('The session has expired; sign in again', { code: 'SESSION_EXPIRED', details: { sessionId } })
  }
}

/** Base of errors that carry the activity they are about. */
export class ActivityError extends LatchkeyError {
  override name = 'ActivityError'
  readonly activity: Activity
  constructor(message: string, code: ErrorCode, activity: Activity, cause?: unknown) {
    super(message, { code, details: { activityId: activity.id, status: activity.status }, cause })
    this.activity = activity
  }
}

/**
 * The activity waits for more root users to approve it (root quorum > 1). It is not lost:
 * approve it with `approveActivity({ fingerprint })` and read it with `getActivity`.
 */
export class ConsensusNeededError extends ActivityError {
  override name = 'ConsensusNeededError'
  constructor(activity: Activity) {
    super(`Activity ${activity.id} needs approval by more root users`, 'CONSENSUS_NEEDED', activity)
  }
}

/** One step an activity waits for: any one of `methods` proves it (`get_mfa_status`, issue 38). */
export interface MfaStep {
  mfaPolicyId: string
  /** Index of the step in its policy (steps are proven in order). */
  step: number
  methods: AuthenticationMethod[]
}

/**
 * The activity waits for the user's second factor (`ACTIVITY_STATUS_AUTHENTICATORS_NEEDED`: an
 * MFA policy matched it). It has not run. Satisfy it with `completeMfa({ challenge: error,
 * totpCode | recoveryCode | passkey })`, which answers what the action would have (`T`), once.
 */
export class MfaRequiredError<T = unknown> extends ActivityError {
  override name = 'MfaRequiredError'
  readonly activityId: string
  readonly fingerprint: string
  /** The next unproven step of each policy it waits for. */
  readonly steps: MfaStep[]
  /** Every method type that proves one of `steps` (what a challenge screen should offer). */
  readonly methods: AuthenticationType[]
  /** Finishes the original action from the completed activity (read its result, decrypt, …). */
  readonly resume: (activity: Activity) => Promise<T>
  constructor(activity: Activity, steps: MfaStep[], resume: (activity: Activity) => Promise<T>) {
    super(`Activity ${activity.id} waits for a second factor`, 'MFA_REQUIRED', activity)
    this.activityId = activity.id
    this.fingerprint = activity.fingerprint
    this.steps = steps
    this.methods = [...new Set(steps.flatMap((step) => step.methods.map((method) => method.type)))]
    this.resume = resume
  }

  /** The same challenge, resuming into `then(result)`: how an action post-processes a waiting activity. */
  map<U>(then: (value: T) => U | Promise<U>): MfaRequiredError<U> {
    return new MfaRequiredError(this.activity, this.steps, async (activity) =>
      then(await this.resume(activity)),
    )
  }
}

/** Runs `then` on `promise`'s value, and on the value a waiting activity resumes to: actions that post-process. */
export async function thenOrResume<T, U>(
  promise: Promise<T>,
  then: (value: T) => U | Promise<U>,
): Promise<U> {
  let value: T
  try {
    value = await promise
  } catch (error) {
    throw error instanceof MfaRequiredError ? (error as MfaRequiredError<T>).map(then) : error
  }
  return then(value)
}

export class ActivityFailedError extends ActivityError {
  override name = 'ActivityFailedError'
  constructor(activity: Activity) {
    super(activity.failure?.message ?? `Activity ${activity.id} failed`, 'ACTIVITY_FAILED', activity)
  }
}

export class ActivityRejectedError extends ActivityError {
  override name = 'ActivityRejectedError'
  constructor(activity: Activity) {
    super(`Activity ${activity.id} was rejected`, 'ACTIVITY_REJECTED', activity)
  }
}

export class PollTimeoutError extends ActivityError {
  override name = 'PollTimeoutError'
  constructor(activity: Activity, timeoutMs: number) {
    super(`Activity ${activity.id} still ${activity.status} after ${timeoutMs} ms`, 'POLL_TIMEOUT', activity)
  }
}

/** A send was still pending when `getCallsStatus`'s wait ran out; it may still be included later. */
export class CallsStatusTimeoutError extends LatchkeyError {
  override name = 'CallsStatusTimeoutError'
  constructor(sendTransactionStatusId: string, txStatus: string, timeoutMs: number) {
    super(`Send ${sendTransactionStatusId} still ${txStatus} after ${timeoutMs} ms`, {
      code: 'POLL_TIMEOUT',
      details: { sendTransactionStatusId, txStatus, timeoutMs },
    })
  }
}

export class BundleSignatureInvalidError extends LatchkeyError {
  override name = 'BundleSignatureInvalidError'
  constructor(message = 'The bundle is not signed by the trusted signer key') {
    super(message, { code: 'BUNDLE_SIGNATURE_INVALID' })
  }
}

export class BundleMismatchError extends LatchkeyError {
  override name = 'BundleMismatchError'
  constructor(field: string) {
    super(`The bundle's ${field} does not match this request`, {
      code: 'BUNDLE_MISMATCH',
      details: { field },
    })
  }
}

export class PopupBlockedError extends LatchkeyError {
  override name = 'PopupBlockedError'
  constructor() {
    super('The sign-in window was blocked by the browser', { code: 'POPUP_BLOCKED' })
  }
}

export class OAuthStateMismatchError extends LatchkeyError {
  override name = 'OAuthStateMismatchError'
  constructor(reason: string) {
    super(`OAuth redirect refused: ${reason}`, { code: 'OAUTH_STATE_MISMATCH', details: { reason } })
  }
}

export class UserCancelledError extends LatchkeyError {
  override name = 'UserCancelledError'
  constructor(message = 'The user cancelled', cause?: unknown) {
    super(message, { code: 'USER_CANCELLED', cause })
  }
}

export class WalletUnavailableError extends LatchkeyError {
  override name = 'WalletUnavailableError'
  constructor(message: string, cause?: unknown) {
    super(message, { code: 'WALLET_UNAVAILABLE', cause })
  }
}

// ---- issue 37: spending limits ----
/**
 * A signature or send refused by a spending limit (`SPENDING_LIMIT_EXCEEDED`, HTTP 429): the
 * window's total plus this spend is over the cap. Amounts are decimal strings of the asset's
 * smallest unit (wei, lamports, token units).
 */
export class SpendingLimitExceededError extends ServiceError {
  override name = 'SpendingLimitExceededError'
  /** The limit that refused it (`latchkey_list_spending_limits` names its window and asset). */
  readonly spendingLimitId: string
  /** The cap per window. */
  readonly limit: string
  /** Spent in the current window. */
  readonly used: string
  /** What is left of the cap now. */
  readonly remaining: string
  /** What this request would have spent. */
  readonly requested: string
  /** When enough frees for this request (epoch ms); absent when the request alone is over the cap. */
  readonly freesAtTimestampMs: number | undefined
  constructor(message: string, status: number | undefined, details: Record<string, unknown>) {
    super(message, { code: 'SPENDING_LIMIT_EXCEEDED', status, details })
    const text = (key: keyof SpendingLimitExceededDetails) =>
      typeof details[key] === 'string' ? (details[key] as string) : ''
    this.spendingLimitId = text('spendingLimitId')
    this.limit = text('limit')
    this.used = text('used')
    this.remaining = text('remaining')
    this.requested = text('requested')
    const frees = Number(text('freesAtTimestampMs'))
    this.freesAtTimestampMs = text('freesAtTimestampMs') && Number.isFinite(frees) ? frees : undefined
  }
}

const isErrorCode = (value: unknown): value is ErrorCode => typeof value === 'string' && value in ERROR_CODES

/** Maps a service error body (and its HTTP status) to a `ServiceError` with the shared code. */
export function fromErrorBody(body: ErrorBody | unknown, status?: number): ServiceError {
  if (!isErrorBody(body)) {
    return new ServiceError(`The service answered ${status ?? 'an error'} without an error body`, {
      code: status === 429 ? 'RATE_LIMITED' : status && status >= 500 ? 'INTERNAL' : 'UNKNOWN',
      status,
      details: { body },
    })
  }
  const details = (body.details ?? {}) as Record<string, unknown>
  let code: ErrorCode = isErrorCode(details.errorCode) ? details.errorCode : 'UNKNOWN'
  // Services that only send the public service's messages still map to our codes.
  if (code === 'UNKNOWN' && body.message.includes(SESSION_KEY_MESSAGES.notFound))
    code = 'PUBLIC_KEY_NOT_FOUND'
  if (code === 'UNKNOWN' && body.message.includes(SESSION_KEY_MESSAGES.expired)) code = 'API_KEY_EXPIRED'
  if (code === 'SPENDING_LIMIT_EXCEEDED') return new SpendingLimitExceededError(body.message, status, details)
  return new ServiceError(body.message, { code, status, details })
}

/** True when the error means the session key is no longer accepted (expired, revoked, unknown). */
export const isSessionKeyRejected = (error: unknown): boolean =>
  error instanceof LatchkeyError &&
  (error.code === 'API_KEY_EXPIRED' ||
    error.code === 'PUBLIC_KEY_NOT_FOUND' ||
    error.code === 'SESSION_EXPIRED')
