import { WEBHOOK_HEADERS } from '@latchkey/protocol'
import { recordAppEvent } from '../kernel/appEvents.ts'
import { type JobContext, JobError, type JobHandler } from '../kernel/JobQueue.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { WebhookDeliveryRow, WebhookEndpointRow } from '../kernel/store/model.ts'
import { type AddressPolicy, refuseAddress, refuseUrl } from './addressPolicy.ts'
import { DELIVER_JOB, deliveryIdOf } from './recordEvent.ts'
import { signDelivery } from './signingKeys.ts'
import {
  WEBHOOK_DEFAULTS,
  WebhookRefusedError,
  type WebhooksOptions,
  type WebhookTransport,
} from './WebhooksOptions.ts'

export type DeliverySettings = typeof WEBHOOK_DEFAULTS & {
  policy: AddressPolicy
  transport: WebhookTransport
}

/** How one try ended, as counted (`webhooks.delivery` events, the metric's `outcome` label). */
export type DeliveryOutcome = 'delivered' | 'http_error' | 'network' | 'timeout' | 'refused' | 'expired'

/** Longest a job spends sending an endpoint's queue before leaving the rest to their own jobs. */
const DRAIN_BUDGET_MS = 20_000

/** The settings of the delivery worker from the wing's options. */
export function deliverySettings(
  options: WebhooksOptions & { transport: WebhookTransport },
  policy: AddressPolicy,
): DeliverySettings {
  return {
    retryWindowMs: options.retryWindowMs ?? WEBHOOK_DEFAULTS.retryWindowMs,
    pauseThreshold: options.pauseThreshold ?? WEBHOOK_DEFAULTS.pauseThreshold,
    connectTimeoutMs: options.connectTimeoutMs ?? WEBHOOK_DEFAULTS.connectTimeoutMs,
    timeoutMs: options.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs,
    maxResponseBytes: options.maxResponseBytes ?? WEBHOOK_DEFAULTS.maxResponseBytes,
    policy,
    transport: options.transport,
  }
}

/**
 * The `webhooks.deliver` job: at least once, in each endpoint's order. The job of the endpoint's
 * oldest pending delivery (the head) takes the endpoint's lease (one sender per endpoint across
 * instances) and sends its pending deliveries in sequence order until one fails (then it is
 * retried with the queue's backoff) or its time is up; a later delivery's job waits for the head
 * (`queued`, not a try). A delivery older than the retry window fails for good; an endpoint that
 * failed `pauseThreshold` times in a row is paused (its deliveries wait, `paused`).
 */
export function deliveryHandler(
  runtime: Runtime,
  settings: DeliverySettings,
): JobHandler<{ deliveryId: string }> {
  return {
    maxAttempts: Number.MAX_SAFE_INTEGER,
    timeoutMs: DRAIN_BUDGET_MS + settings.timeoutMs + 5000,
    async run({ deliveryId }, context) {
      const delivery = await runtime.store.get('webhookDeliveries', deliveryId)
      if (delivery?.state !== 'pending') return
      const endpoint = await runtime.store.get('webhookEndpoints', delivery.endpointId)
      if (!endpoint)
        return void (await settle(runtime, delivery, { state: 'failed', lastError: 'endpoint_deleted' }))
      if (!endpoint.isActive || endpoint.pausedAt)
        return void (await settle(runtime, delivery, { state: 'paused' }))
      const queue = await pendingOf(runtime, endpoint.id)
      if (queue[0]?.id !== delivery.id) throw new JobError('queued')
      // The lease is this run's, not the instance's: another job of the same worker (a later
      // delivery that became the head while this run still sends) must wait for it too.
      const holder = `${runtime.jobs.workerId}/${runtime.newId()}`
      if (!(await lease(runtime, endpoint.id, { workerId: holder, settings }))) throw new JobError('busy')
      try {
        await drain(runtime, { queue, settings, context, holder })
      } finally {
        await release(runtime, { endpointId: endpoint.id, holder }).catch(() => undefined)
      }
    },
  }
}

async function pendingOf(runtime: Runtime, endpointId: string): Promise<WebhookDeliveryRow[]> {
  return (await runtime.store.findBy('webhookDeliveries', 'endpointId', endpointId))
    .filter((row) => row.state === 'pending')
    .sort((a, b) => a.sequence - b.sequence)
}

/**
 * Sends `queue` in order, then whatever became pending meanwhile, until the queue is empty or the
 * time is up (the rest is left to its own jobs); throws (the job's retry) on the first failure.
 */
async function drain(
  runtime: Runtime,
  input: { queue: WebhookDeliveryRow[]; settings: DeliverySettings; context: JobContext; holder: string },
): Promise<void> {
  const started = Date.now()
  let queue = input.queue
  while (queue.length > 0) {
    await drainOnce(runtime, { ...input, queue, started })
    if (Date.now() - started > DRAIN_BUDGET_MS || input.context.signal.aborted) return
    queue = await pendingOf(runtime, queue[0]!.endpointId)
  }
}

async function drainOnce(
  runtime: Runtime,
  input: {
    queue: WebhookDeliveryRow[]
    settings: DeliverySettings
    context: JobContext
    started: number
    holder: string
  },
): Promise<void> {
  const { queue, settings, context, started } = input
  for (const [index, delivery] of queue.entries()) {
    // Another job (its own, or the next head's) finishes the rest.
    if (index > 0 && (Date.now() - started > DRAIN_BUDGET_MS || context.signal.aborted)) return
    const current = await runtime.store.get('webhookDeliveries', delivery.id)
    if (current?.state !== 'pending') continue
    if (runtime.now() - (current.retryFrom ?? current.createdAt) > settings.retryWindowMs) {
      await settle(runtime, current, { state: 'failed', lastError: 'expired' })
      runtime.emit('webhooks.delivery', {
        outcome: 'expired',
        endpointId: current.endpointId,
        eventType: current.eventType,
      })
      continue
    }
    // The endpoint's lease covers one try at a time (renewed before each): a process killed
    // mid-try frees the endpoint two timeouts later, not at the end of a whole drain.
    if (!(await lease(runtime, current.endpointId, { workerId: input.holder, settings }))) return
    const outcome = await sendOnce(runtime, { delivery: current, settings, signal: context.signal })
    runtime.emit('webhooks.delivery', {
      outcome: outcome.outcome,
      endpointId: current.endpointId,
      eventType: current.eventType,
    })
    const sent = outcome.request ? { lastRequest: outcome.request } : {}
    if (outcome.outcome === 'delivered') {
      await settle(runtime, current, {
        state: 'delivered',
        lastStatus: outcome.status,
        deliveredAt: runtime.now(),
        ...sent,
      })
      await succeeded(runtime, current.endpointId, settings)
      continue
    }
    await settle(runtime, current, {
      state: 'pending',
      lastError: outcome.outcome,
      ...(outcome.status ? { lastStatus: outcome.status } : {}),
      ...sent,
    })
    await failed(runtime, current.endpointId, settings)
    throw new JobError(outcome.outcome)
  }
}

/** One signed POST of `delivery` (the same body, a fresh timestamp and signature). */
async function sendOnce(
  runtime: Runtime,
  input: { delivery: WebhookDeliveryRow; settings: DeliverySettings; signal: AbortSignal },
): Promise<{ outcome: DeliveryOutcome; status?: number; request?: WebhookDeliveryRow['lastRequest'] }> {
  const { delivery, settings } = input
  const endpoint = await runtime.store.get('webhookEndpoints', delivery.endpointId)
  if (!endpoint) return { outcome: 'refused' }
  if (refuseUrl(endpoint.url, settings.policy)) return { outcome: 'refused' }
  const body = new TextEncoder().encode(delivery.body)
  const now = runtime.now()
  const timestampMs = String(now)
  const { keyId, signature } = await signDelivery(runtime, { eventId: delivery.eventId, timestampMs, body })
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Latchkey-Webhooks/1',
    [WEBHOOK_HEADERS.eventId]: delivery.eventId,
    [WEBHOOK_HEADERS.eventType]: delivery.eventType,
    [WEBHOOK_HEADERS.organizationId]: delivery.organizationId,
    [WEBHOOK_HEADERS.timestamp]: timestampMs,
    [WEBHOOK_HEADERS.keyId]: keyId,
    [WEBHOOK_HEADERS.algorithm]: 'ed25519',
    [WEBHOOK_HEADERS.version]: 'v1',
    [WEBHOOK_HEADERS.signature]: signature,
  }
  const request = { url: endpoint.url, headers, sentAt: now }
  const ended = (outcome: DeliveryOutcome, status?: number) => ({
    outcome,
    ...(status !== undefined ? { status } : {}),
    request,
  })
  try {
    const response = await settings.transport({
      url: endpoint.url,
      headers: { ...headers },
      body,
      refuse: (address) => refuseAddress(address, settings.policy),
      connectTimeoutMs: settings.connectTimeoutMs,
      timeoutMs: settings.timeoutMs,
      maxResponseBytes: settings.maxResponseBytes,
      signal: input.signal,
    })
    if (response.status >= 200 && response.status < 300) return ended('delivered', response.status)
    return ended('http_error', response.status)
  } catch (error) {
    if (error instanceof WebhookRefusedError) return ended('refused')
    if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
      return ended('timeout')
    return ended('network')
  }
}

async function settle(runtime: Runtime, delivery: WebhookDeliveryRow, changes: Partial<WebhookDeliveryRow>) {
  await runtime.store.transaction(async (tx) => {
    const current = await tx.get('webhookDeliveries', delivery.id)
    if (!current) return
    const attempts = changes.state === 'paused' ? current.attempts : current.attempts + 1
    await tx.put('webhookDeliveries', { ...current, ...changes, attempts, updatedAt: runtime.now() })
  })
}

/** Takes the endpoint's lease unless another live worker holds it. */
async function lease(
  runtime: Runtime,
  endpointId: string,
  input: { workerId: string; settings: DeliverySettings },
): Promise<boolean> {
  return runtime.store.transaction(async (tx) => {
    const endpoint = await tx.get('webhookEndpoints', endpointId)
    if (!endpoint) return false
    const now = runtime.now()
    if (endpoint.sendingBy && endpoint.sendingBy !== input.workerId && (endpoint.sendingUntil ?? 0) > now)
      return false
    await tx.put('webhookEndpoints', {
      ...endpoint,
      sendingBy: input.workerId,
      sendingUntil: now + input.settings.timeoutMs * 2 + 1000,
    })
    return true
  })
}

/** Gives the endpoint's lease back, if it is still `holder`'s (an expired one may be another's now). */
async function release(runtime: Runtime, input: { endpointId: string; holder: string }): Promise<void> {
  await runtime.store.transaction(async (tx) => {
    const endpoint = await tx.get('webhookEndpoints', input.endpointId)
    if (endpoint?.sendingBy !== input.holder) return
    const { sendingBy: _, sendingUntil: __, ...rest } = endpoint
    await tx.put('webhookEndpoints', rest)
  })
}

async function succeeded(runtime: Runtime, endpointId: string, _settings: DeliverySettings): Promise<void> {
  await runtime.store.transaction(async (tx) => {
    const endpoint = await tx.get('webhookEndpoints', endpointId)
    if (!endpoint || endpoint.consecutiveFailures === 0) return
    await tx.put('webhookEndpoints', { ...endpoint, consecutiveFailures: 0 })
  })
}

/** Counts a failure; pauses the endpoint at the threshold (an event, and an app event to the others). */
async function failed(runtime: Runtime, endpointId: string, settings: DeliverySettings): Promise<void> {
  const paused = await runtime.store.transaction(async (tx) => {
    const endpoint = await tx.get('webhookEndpoints', endpointId)
    if (!endpoint) return undefined
    const consecutiveFailures = endpoint.consecutiveFailures + 1
    const pause = !endpoint.pausedAt && consecutiveFailures >= settings.pauseThreshold
    const next: WebhookEndpointRow = {
      ...endpoint,
      consecutiveFailures,
      ...(pause ? { pausedAt: runtime.now() } : {}),
    }
    await tx.put('webhookEndpoints', next)
    if (!pause) return undefined
    // The organization's other endpoints hear of it (this one's copy waits, paused, with the rest).
    await recordAppEvent(runtime, tx, {
      id: `evt_${runtime.newId()}`,
      organization: { id: endpoint.organizationId },
      type: 'LATCHKEY_ENDPOINT_PAUSED',
      data: { endpointId, consecutiveFailures },
    })
    // Its waiting deliveries wait paused (no job spins on them); resuming enqueues them again.
    for (const row of await tx.findBy('webhookDeliveries', 'endpointId', endpointId))
      if (row.state === 'pending')
        await tx.put('webhookDeliveries', { ...row, state: 'paused', updatedAt: runtime.now() })
    return next
  })
  if (paused)
    runtime.emit('webhooks.endpoint_paused', { endpointId, consecutiveFailures: paused.consecutiveFailures })
}

/** Enqueues the deliveries of `endpointId` that wait (paused, or pending without a live job) again, in order. */
export async function resumeDeliveries(
  runtime: Runtime,
  tx: import('../kernel/store/Store.ts').Transaction,
  endpointId: string,
): Promise<number> {
  const waiting = (await tx.findBy('webhookDeliveries', 'endpointId', endpointId))
    .filter((row) => row.state === 'paused' || row.state === 'pending')
    .sort((a, b) => a.sequence - b.sequence)
  for (const row of waiting) {
    await tx.put('webhookDeliveries', {
      ...row,
      state: 'pending',
      retryFrom: runtime.now(),
      updatedAt: runtime.now(),
    })
    await runtime.jobs.enqueue(tx, DELIVER_JOB, { deliveryId: row.id }, { id: `job.${row.id}` })
  }
  return waiting.length
}

export { deliveryIdOf }
