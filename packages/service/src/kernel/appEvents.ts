import type { WebhookEventDataMap, WebhookEventType } from '@latchkey/protocol'
import type { Runtime } from './Runtime.ts'
import type { Transaction } from './store/Store.ts'

/**
 * The contract between whatever happens (the pipeline, sign-in, sending) and the webhooks wing,
 * which delivers it: an app event is recorded in the transaction that makes it happen, so it
 * exists exactly when that transaction commits (never for a rolled-back or replayed request).
 * Without the webhooks wing recording costs a map lookup; with it, one indexed read per
 * organization concerned (the event's and its parent's endpoints) and one row per event.
 */
export interface AppEvent<T extends WebhookEventType = WebhookEventType> {
  /** Where it happened; its parent (if any) is found by the recorder when an endpoint may want it. */
  organization: { id: string; parentOrganizationId?: string | undefined }
  type: T
  data: WebhookEventDataMap[T]
  /** A stable id the caller already has (so a rerun of the transaction writes the same event). @default a new id */
  id?: string
}

/** What the webhooks wing registers for a runtime (`registerAppEvents`). */
export interface AppEventRecorder {
  /**
   * Writes the event in `tx` (one row naming the endpoints that want it, read in `tx` itself: an
   * endpoint another instance created a moment ago is seen as soon as its transaction committed);
   * the wing fans it out to numbered deliveries after the commit.
   */
  record(tx: Transaction, event: AppEvent): Promise<void>
}

const recorders = new WeakMap<Runtime, AppEventRecorder>()

/** Called by the webhooks wing when it loads; nothing else should. */
export function registerAppEvents(runtime: Runtime, recorder: AppEventRecorder): void {
  recorders.set(runtime, recorder)
}

/** Records `event` in `tx` for the endpoints subscribed to it (none: nothing is written). */
export async function recordAppEvent<T extends WebhookEventType>(
  runtime: Runtime,
  tx: Transaction,
  event: AppEvent<T>,
): Promise<void> {
  const recorder = recorders.get(runtime)
  if (!recorder) return
  await recorder.record(tx, event as AppEvent)
}

const KEPT = Symbol('latchkey.appEvents.keptOnFailure')

/**
 * Attaches `event` to an error a handler throws: the activity fails and its writes are rolled
 * back, but the pipeline records the event in the activity's transaction after the rollback
 * (`recordKeptAppEvents`), so it exists exactly when the FAILED activity does (never for a
 * replay, which runs no handler). How a refusal (a spending limit) is still an event.
 */
export function keepAppEventOnFailure<E extends object>(error: E, event: AppEvent): E {
  const holder = error as E & { [KEPT]?: AppEvent[] }
  holder[KEPT] = [...(holder[KEPT] ?? []), event]
  return error
}

/** Records in `tx` the events attached to `thrown` by `keepAppEventOnFailure` (after its rollback). */
export async function recordKeptAppEvents(runtime: Runtime, tx: Transaction, thrown: unknown): Promise<void> {
  if (typeof thrown !== 'object' || thrown === null) return
  for (const event of (thrown as { [KEPT]?: AppEvent[] })[KEPT] ?? [])
    await recordAppEvent(runtime, tx, event)
}
