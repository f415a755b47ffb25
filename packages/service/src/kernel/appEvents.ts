import type { WebhookEventDataMap, WebhookEventType } from '@latchkey/protocol'
import type { Runtime } from './Runtime.ts'
import type { Transaction } from './store/Store.ts'

/**
 * The contract between whatever happens (the pipeline, sign-in, sending) and the webhooks wing,
 * which delivers it: an app event is recorded in the transaction that makes it happen, so it
 * exists exactly when that transaction commits (never for a rolled-back or replayed request).
 * Without the webhooks wing, or while no endpoint is subscribed, recording costs a map lookup.
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
  /** True when some endpoint might want events at all (cheap, in memory): false skips everything. */
  anySubscribed(): boolean
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
  if (!recorder?.anySubscribed()) return
  await recorder.record(tx, event as AppEvent)
}
