import type { ActivityPath } from '@latchkey/protocol'
import { ApiError } from '../errors.ts'
import type { Runtime } from '../Runtime.ts'
import type { ActivityContext, ActivityHandler, Caller, Registry } from '../registry.ts'
import type { ActivityRow, OrganizationRow, VoteRow } from '../store/model.ts'
import { isDatabaseError, type Transaction } from '../store/Store.ts'
import { toApiError } from './errorResponse.ts'
import { Reader } from './Reader.ts'

export interface Execution {
  row: ActivityRow
  error?: ApiError
  /** The activity to answer with instead of this one (a vote answers with the voted activity). */
  respondWith?: string
  /** The activity's votes, when known without a lookup (a new activity no one voted on). */
  votes?: VoteRow[]
}

/**
 * Runs an activity's handler inside `tx` and stores its outcome on the activity row. A handler
 * that throws has its writes rolled back (the row becomes FAILED with the error), and the error
 * is returned for the caller to answer with. `parameters` are the ones parsed when the request
 * came in; an activity that waited for consensus is parsed again from its stored intent.
 */
export async function executeActivity(
  tx: Transaction,
  service: Runtime,
  registry: Registry,
  row: ActivityRow,
  organization: OrganizationRow,
  caller: Caller,
  parameters?: unknown,
  prepared?: { value?: unknown; error?: unknown },
  precomputed?: unknown,
): Promise<Execution> {
  const handler = registry.activities.get(row.path as ActivityPath) as ActivityHandler | undefined
  // The handler's writes are undone if it throws (only a handler that writes costs a savepoint).
  const savepoint = tx.lazySavepoint()
  const ctx: ActivityContext & { respondWith?: string } = {
    tx,
    service,
    registry,
    now: service.now(),
    organization,
    caller,
    activityId: row.id,
    newId: () => service.newId(),
    ...(precomputed === undefined ? {} : { precomputed }),
  }
  try {
    if (!handler) throw new ApiError('ROUTE_NOT_FOUND', `no handler for ${row.path}`)
    const parsed = parameters ?? handler.parse(new Reader(row.intent, 'parameters'))
    if (prepared?.error !== undefined) throw prepared.error
    if (prepared) ctx.prepared = prepared.value
    else if (handler.prepare)
      ctx.prepared = await handler.prepare(
        { service, registry, now: ctx.now, organization, caller, activityId: row.id },
        parsed as never,
      )
    const result = await handler.run(ctx, parsed as never)
    savepoint.end()
    const done = await tx.put('activities', {
      ...row,
      status: 'ACTIVITY_STATUS_COMPLETED',
      result: result as Record<string, unknown>,
      updatedAt: service.now(),
    })
    return { row: done, ...(ctx.respondWith ? { respondWith: ctx.respondWith } : {}) }
  } catch (thrown) {
    // A serialization conflict or an outage is the transaction's, not the activity's: the store
    // reruns the transaction (or answers 503); it is never recorded as the activity failing.
    if (isDatabaseError(thrown)) throw thrown
    await savepoint.rollback()
    const error = toApiError(thrown)
    const failed = await tx.put('activities', {
      ...row,
      status: 'ACTIVITY_STATUS_FAILED',
      failure: error.toBody() as ActivityRow['failure'] & object,
      updatedAt: service.now(),
    })
    return { row: failed, error }
  }
}

/** Lets a handler answer with another activity than itself (approve/reject answer with the voted one). */
export function respondWith(ctx: ActivityContext, activityId: string): void {
  ;(ctx as ActivityContext & { respondWith?: string }).respondWith = activityId
}
