import {
  ACTIVITIES,
  type Activity,
  type ActivityParameters,
  type ActivityPath,
  type ActivityResponse,
  type ActivityResult,
  activityResultOf,
  PROXY_CONFIG_HEADER,
  type ProxyPath,
  type ProxyRequest,
  type ProxyResponse,
  type QueryPath,
  type QueryRequest,
  type QueryResponse,
  SESSION_HEADER,
  TERMINAL_ACTIVITY_STATUSES,
} from '@latchkey/protocol'
import {
  AbortedError,
  ActivityFailedError,
  ActivityRejectedError,
  ConsensusNeededError,
  isSessionKeyRejected,
  KeyNotFoundError,
  LatchkeyError,
  MfaRequiredError,
  type MfaStep,
  PollTimeoutError,
} from '../errors.ts'
import { dispatchSessionEvent } from '../session/createSessionStore.ts'
import { requireSession } from '../session/sessions.ts'
import type { Session } from '../session/types.ts'
import { apiKeyStamper } from '../stampers/apiKeyStamper.ts'
import type { Stamp, Stamper } from '../stampers/types.ts'
import type { Latchkey } from '../types.ts'
import { httpRequest } from './http.ts'

export interface RequestOptions {
  /** Stamps the request instead of the active session (sign-in flows, explicit keys). */
  stamper?: Stamper | undefined
  /** Acts with this session instead of the active one. */
  sessionId?: string | undefined
  signal?: AbortSignal | undefined
}

export interface SubmitOptions extends RequestOptions {
  /** Organization the activity acts in. @default the session's organization, else the configured one */
  organizationId?: string | undefined
}

export interface SubmitReturnType<P extends ActivityPath> {
  activity: Activity
  result: ActivityResult<P>
}

/** Stamps with the session's key; a key gone from the store marks the session `storage-lost`. */
async function sessionStamp(client: Latchkey, session: Session, body: string): Promise<Stamp> {
  if (session.sessionType === 'SESSION_TYPE_READ_ONLY' || !session.publicKey) {
    const token = client.tokens.get(session.id)
    if (!token) throw new KeyNotFoundError(session.id)
    return { header: SESSION_HEADER, value: token }
  }
  const key = await client.keyStore.get(session.publicKey)
  if (!key) {
    dispatchSessionEvent(client.store, session.id, { type: 'KEY_MISSING' })
    throw new KeyNotFoundError(session.publicKey)
  }
  return apiKeyStamper(key).stamp(body)
}

async function signedPost<T>(
  client: Latchkey,
  url: string,
  body: string,
  options: RequestOptions,
  session: Session | undefined,
): Promise<T> {
  const stamp = options.stamper
    ? await options.stamper.stamp(body)
    : await sessionStamp(client, session as Session, body)
  try {
    return await httpRequest<T>({
      url,
      body,
      headers: { [stamp.header]: stamp.value },
      fetch: client.config.fetch,
      timeoutMs: client.config.requestTimeoutMs,
      signal: options.signal,
    })
  } catch (error) {
    // The service no longer accepts this session's key: the session is over, say so everywhere.
    if (session && !options.stamper && isSessionKeyRejected(error))
      dispatchSessionEvent(client.store, session.id, { type: 'EXPIRE' })
    throw error
  }
}

/** Waits `ms`, or rejects with `AbortedError` when `signal` aborts first. */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError(signal.reason))
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        reject(new AbortedError(signal.reason))
      },
      { once: true },
    )
  })

/** Throws the typed error of a finished-but-unsuccessful or consensus-waiting activity. */
export function assertActivityCompleted(activity: Activity): void {
  switch (activity.status) {
    case 'ACTIVITY_STATUS_COMPLETED':
      return
    case 'ACTIVITY_STATUS_CONSENSUS_NEEDED':
      throw new ConsensusNeededError(activity)
    case 'ACTIVITY_STATUS_REJECTED':
      throw new ActivityRejectedError(activity)
    case 'ACTIVITY_STATUS_FAILED':
      throw new ActivityFailedError(activity)
    default:
      throw new LatchkeyError(`Activity ${activity.id} is ${activity.status}`, { code: 'UNKNOWN' })
  }
}

/** The last `timestampMs` each client put in an activity's body. */
const lastTimestamp = new WeakMap<Latchkey, number>()

/**
 * The time for a new activity's body: now, but always after the client's last. The service answers
 * identical bodies once (a request sent twice), so two equal activities submitted in the same
 * millisecond (two payments of the same amount fired at once) would otherwise be one activity, and
 * both callers would hold its one result.
 */
function timestampFor(client: Latchkey): number {
  const at = Math.max(Date.now(), (lastTimestamp.get(client) ?? 0) + 1)
  lastTimestamp.set(client, at)
  return at
}

/**
 * Submits an activity (`/public/v1/submit/<path>`), stamped by the active session unless a
 * stamper is given, and polls `get_activity` with backoff while it is CREATED or PENDING.
 * Returns the activity in whatever state it settled (COMPLETED, FAILED, REJECTED,
 * CONSENSUS_NEEDED, AUTHENTICATORS_NEEDED); `submit` is the strict variant.
 */
export async function submitActivity<P extends ActivityPath>(
  client: Latchkey,
  path: P,
  parameters: ActivityParameters<P>,
  options: SubmitOptions = {},
): Promise<Activity> {
  await client.hydrate()
  const session = options.stamper ? undefined : requireSession(client, options.sessionId)
  const organizationId = options.organizationId ?? session?.organizationId ?? client.config.organizationId
  const body = JSON.stringify({
    type: ACTIVITIES[path].type,
    timestampMs: String(timestampFor(client)),
    organizationId,
    parameters,
  })
  const response = await signedPost<ActivityResponse<P>>(
    client,
    `${client.config.baseUrl}/public/v1/submit/${path}`,
    body,
    options,
    session,
  )
  let activity = response.activity as Activity
  if (!activity || typeof activity.status !== 'string')
    throw new LatchkeyError(`The service answered ${path} without an activity`, { code: 'INTERNAL' })
  const { intervalMs, backoff, maxIntervalMs, timeoutMs } = client.config.polling
  const deadline = Date.now() + timeoutMs
  let delay = intervalMs
  // Waiting for votes or for the user's second factor (an MFA policy) is settled for now: polling
  // would not change it.
  while (
    !TERMINAL_ACTIVITY_STATUSES.includes(activity.status) &&
    activity.status !== 'ACTIVITY_STATUS_CONSENSUS_NEEDED' &&
    activity.status !== 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'
  ) {
    if (Date.now() + delay > deadline) throw new PollTimeoutError(activity, timeoutMs)
    await sleep(delay, options.signal)
    delay = Math.min(delay * backoff, maxIntervalMs)
    const polled = await query(
      client,
      'get_activity',
      { organizationId: activity.organizationId, activityId: activity.id },
      options,
    )
    activity = polled.activity
  }
  return activity
}

/**
 * Submits an activity and returns its result. An activity waiting for consensus throws
 * `ConsensusNeededError` (carrying it), one waiting for the user's second factor
 * `MfaRequiredError` (satisfy it with `completeMfa`), a failed or rejected one its typed error:
 * never silent.
 */
export async function submit<P extends ActivityPath>(
  client: Latchkey,
  path: P,
  parameters: ActivityParameters<P>,
  options: SubmitOptions = {},
): Promise<SubmitReturnType<P>> {
  const activity = await submitActivity(client, path, parameters, options)
  const finish = async (settled: Activity): Promise<SubmitReturnType<P>> => {
    assertActivityCompleted(settled)
    const result = activityResultOf(path, settled)
    if (result === undefined)
      throw new LatchkeyError(`Activity ${settled.id} completed without ${ACTIVITIES[path].resultKey}`, {
        code: 'INTERNAL',
      })
    return { activity: settled, result }
  }
  if (activity.status === 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    throw await mfaRequiredError(client, { activity, resume: finish, options })
  return finish(activity)
}

/**
 * The typed error of an activity waiting for the user's second factor: what it waits for (the next
 * unproven step of each policy, from `get_mfa_status`) and how to finish the action once it ran.
 */
export async function mfaRequiredError<T>(
  client: Latchkey,
  {
    activity,
    resume,
    options = {},
  }: { activity: Activity; resume: (activity: Activity) => Promise<T>; options?: RequestOptions },
): Promise<MfaRequiredError<T>> {
  const { mfaStatuses } = await query(
    client,
    'get_mfa_status',
    { organizationId: activity.organizationId, activityId: activity.id },
    options,
  )
  const steps: MfaStep[] = []
  for (const status of mfaStatuses) {
    if (status.satisfied) continue
    const step = status.satisfiedMethods.length
    const next = status.requiredMethods[step]
    if (next) steps.push({ mfaPolicyId: status.mfaPolicyId, step, methods: next.any })
  }
  return new MfaRequiredError(activity, steps, resume)
}

/** Runs a query (`/public/v1/query/<path>`), stamped by the active session unless a stamper is given. */
export async function query<P extends QueryPath>(
  client: Latchkey,
  path: P,
  body: QueryRequest<P>,
  options: RequestOptions = {},
): Promise<QueryResponse<P>> {
  await client.hydrate()
  const session = options.stamper ? undefined : requireSession(client, options.sessionId)
  return signedPost<QueryResponse<P>>(
    client,
    `${client.config.baseUrl}/public/v1/query/${path}`,
    JSON.stringify(body),
    options,
    session,
  )
}

/** Calls the auth proxy (`{authProxyUrl}/v1/<path>`); the proxy stamps forwarded calls itself. */
export function proxy<P extends ProxyPath>(
  client: Latchkey,
  path: P,
  body: ProxyRequest<P>,
  options: { signal?: AbortSignal | undefined; headers?: Record<string, string> } = {},
): Promise<ProxyResponse<P>> {
  return httpRequest<ProxyResponse<P>>({
    url: `${client.config.authProxyUrl}/v1/${path}`,
    body: JSON.stringify(body),
    headers: { ...options.headers, [PROXY_CONFIG_HEADER]: client.config.authProxyConfigId },
    fetch: client.config.fetch,
    timeoutMs: client.config.requestTimeoutMs,
    signal: options.signal,
  })
}
