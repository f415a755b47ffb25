import { type ActivityPath, type ActivityStatus, TERMINAL_ACTIVITY_STATUSES } from '@latchkey/protocol'
import { recordKeptAppEvents } from '../kernel/appEvents.ts'
import { type ApiError, NotFoundError } from '../kernel/base/errors.ts'
import type { ServiceEventMap, ServiceEventName } from '../kernel/base/events.ts'
import { passkeysShownIn, sightPasskeys } from '../kernel/passkeySightings.ts'
import { Reader } from '../kernel/Reader.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type {
  ActivityContext,
  ActivityHandler,
  Caller,
  PrepareContext,
  Registry,
} from '../kernel/registry.ts'
import type { ActivityRow, VoteRow } from '../kernel/store/model.ts'
import { isDatabaseError, NotInSnapshot, type Reads, type Transaction } from '../kernel/store/Store.ts'
import { toApiError } from './errorResponse.ts'

export interface Execution {
  row: ActivityRow
  error?: ApiError
  /** The activity to answer with instead of this one (a vote answers with the voted activity). */
  respondWith?: string
  /**
   * That activity as this transaction left it, when it ran here and answers what it shows only
   * once (`ActivityHandler.shownOnce`): the answer shows this instead of the stored row.
   */
  respondWithRow?: ActivityRow
  /** The activity's votes, when known without a lookup (a new activity no one voted on). */
  votes?: VoteRow[]
  /** Events the handler reported (`ctx.report`), for the caller to emit once the transaction commits. */
  reported?: Reported
}

/** Events held until a transaction commits. */
export type Reported = Array<{ [K in ServiceEventName]: [K, ServiceEventMap[K]] }[ServiceEventName]>

/** Emits what a committed execution reported. */
export function emitReported(runtime: Pick<Runtime, 'emit'>, reported: Reported | undefined): void {
  for (const [name, data] of reported ?? []) runtime.emit(name, data as never)
}

/**
 * The context of a handler's `prepare` and `precompute` (where the activity acts, who asked for
 * it), as of now: the one place it is made, for a new activity and one run after a vote alike.
 */
export function prepareContext({
  runtime,
  registry,
  organization,
  caller,
  activityId,
  type,
  reads = runtime.store,
}: Omit<PrepareContext, 'now' | 'reads'> & { reads?: Reads }): PrepareContext {
  return { runtime, registry, now: runtime.now(), organization, caller, activityId, type, reads }
}

/** What `prepare` gave: its value, or what it threw. */
export interface Prepared {
  value?: unknown
  error?: unknown
}

export interface ExecutionInput extends Omit<PrepareContext, 'now' | 'activityId' | 'reads' | 'type'> {
  tx: Transaction
  /** The activity's row; its id is the activity's. */
  row: ActivityRow
  /** The parameters parsed when the request came in (absent: parsed again from the row's intent). */
  parameters?: unknown
  /** What `prepare` gave before the transaction (absent: `prepare` runs here, inside it). */
  prepared?: Prepared
  /** What `precompute` resolved to for this request. */
  precomputed?: unknown
}

/**
 * Runs an activity's handler inside `tx` and stores its outcome on the activity row. A handler
 * that throws has its writes rolled back (the row becomes FAILED with the error), and the error
 * is returned for the caller to answer with. An activity that waited for consensus has no
 * parameters, preparation or precomputation from its request: it is parsed again from its stored
 * intent and prepared here.
 */
export async function executeActivity(input: ExecutionInput): Promise<Execution> {
  const { tx, runtime, registry, row, parameters, prepared, precomputed } = input
  const handler = registry.activities.get(row.path as ActivityPath) as ActivityHandler | undefined
  // The handler's writes are undone if it throws (only a handler that writes costs a savepoint).
  const savepoint = tx.lazySavepoint()
  const scope = prepareContext({ ...input, activityId: row.id, type: row.type })
  const reported: Reported = []
  const ctx: ActivityContext & Responds = {
    tx,
    ...scope,
    newId: () => runtime.newId(),
    report: (name, data) => {
      reported.push([name, data] as Reported[number])
    },
    ...(precomputed === undefined ? {} : { precomputed }),
  }
  try {
    if (!handler) throw new NotFoundError({ code: 'ROUTE_NOT_FOUND', message: `no handler for ${row.path}` })
    const parsed = parameters ?? handler.parse(new Reader(row.intent, 'parameters'), row.type)
    if (prepared?.error !== undefined) throw prepared.error
    if (prepared) ctx.prepared = prepared.value
    else if (handler.prepare) ctx.prepared = await handler.prepare(scope, parsed as never)
    const result = (await handler.run(ctx, parsed as never)) as Record<string, unknown>
    savepoint.end()
    const stored = handler.shownOnce ? emptied(result, handler.shownOnce) : result
    const done = await putActivity(tx, registry, {
      ...row,
      status: 'ACTIVITY_STATUS_COMPLETED',
      result: stored,
      // A replay of the request answers as it did: with the activity it answered with.
      ...(ctx.respondWith ? { respondsWith: ctx.respondWith } : {}),
      updatedAt: runtime.now(),
    })
    return {
      // The answer carries what is shown once; the stored row never does.
      row: stored === result ? done : { ...done, result },
      ...(ctx.respondWith ? { respondWith: ctx.respondWith } : {}),
      ...(ctx.respondWithRow ? { respondWithRow: ctx.respondWithRow } : {}),
      ...(reported.length > 0 ? { reported } : {}),
    }
  } catch (thrown) {
    // A serialization conflict or an outage is the transaction's, not the activity's: the store
    // reruns the transaction (or answers 503); it is never recorded as the activity failing. Nor
    // is a read its snapshot run could not answer: the store runs it again in a transaction.
    if (isDatabaseError(thrown) || thrown instanceof NotInSnapshot) throw thrown
    await savepoint.rollback()
    // A refusal may still be an event (a spending limit's): recorded after the rollback.
    await recordKeptAppEvents(runtime, tx, thrown)
    const error = toApiError(thrown)
    const failed = await putActivity(tx, registry, {
      ...row,
      status: 'ACTIVITY_STATUS_FAILED',
      failure: error.toBody() as ActivityRow['failure'] & object,
      updatedAt: runtime.now(),
    })
    return { row: failed, error }
  }
}

/** `record` with `fields` emptied ('' for a string, [] for a list): what a record keeps of a secret. */
export function emptied(record: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const copy = { ...record }
  for (const field of fields)
    if (field in copy)
      copy[field] = Array.isArray(copy[field]) ? [] : typeof copy[field] === 'string' ? '' : null
  return copy
}

/**
 * `activity` as `viewer` is shown it, without the bearer credentials its intent may hold while it waits
 * (`bearerParameters`). What its handler shows once (`shownOnce`) is never in the stored
 * record; `stored` (a record read back) empties it too in a record written before the field was.
 * A row as a run left it (the answer of the request that ran it) shows it: another user's vote
 * that ran it has it emptied already (`runAsSubmitter`). A handler that makes it again
 * (`shownAgain`: a bearer token) makes it for the activity's submitter asking with the credential
 * that submitted it, not with a read-only session (a replay of the request, `get_activity`
 * polling one that ran after waiting); anyone else is shown it emptied, the one whose vote let it
 * run included.
 */
export async function shownTo(
  { runtime, registry, reads }: { runtime: Runtime; registry: Registry; reads: Reads },
  activity: ActivityRow,
  viewer: Caller | undefined,
  { stored = false }: { stored?: boolean } = {},
): Promise<ActivityRow> {
  const handler = registry.activities.get(activity.path as ActivityPath) as ActivityHandler | undefined
  // A bearer credential the activity redeems is never shown from its record (`bearerParameters`).
  const row = handler?.bearerParameters?.length
    ? { ...activity, intent: cleared(activity.intent, handler.bearerParameters) }
    : activity
  const fields = handler?.shownOnce
  if (!fields?.length || !row.result) return row
  const kept = stored ? emptied(row.result, fields) : row.result
  if (!handler?.shownAgain) return kept === row.result ? row : { ...row, result: kept }
  const submitter =
    viewer !== undefined &&
    !viewer.readOnly &&
    viewer.userId === row.userId &&
    viewer.credential.id === row.credentialId
  if (!submitter) return { ...row, result: emptied(row.result, fields) }
  if (row.status !== 'ACTIVITY_STATUS_COMPLETED' || fields.every((field) => isShown(kept[field])))
    return kept === row.result ? row : { ...row, result: kept }
  const again = await handler.shownAgain({ runtime, reads, caller: viewer }, {
    ...row,
    result: kept,
  } as never)
  return { ...row, result: { ...kept, ...again } }
}

const isShown = (value: unknown) => (Array.isArray(value) ? value.length > 0 : Boolean(value))

/**
 * `row` as it is recorded: once the activity has ended (`TERMINAL_ACTIVITY_STATUSES`), its intent
 * without what its handler clears when done (`ActivityHandler.clearedWhenDone`, `bearerParameters`). While it may
 * still run (awaiting consensus or a gate) it keeps its intent whole: it is parsed again from it.
 */
export function recorded(registry: Registry, row: ActivityRow): ActivityRow {
  if (!TERMINAL_ACTIVITY_STATUSES.includes(row.status as ActivityStatus)) return row
  const handler = registry.activities.get(row.path as ActivityPath) as ActivityHandler | undefined
  const paths = [...(handler?.clearedWhenDone ?? []), ...(handler?.bearerParameters ?? [])]
  if (paths.length === 0) return row
  return { ...row, intent: cleared(row.intent, paths) }
}

/**
 * Writes the activity's row in `tx` as it is recorded (`recorded`), with the sightings of the
 * passkeys its record shows (`ActivityHandler.passkeyParameters`): no one reads a record showing
 * a passkey before the service has noted that it showed it.
 */
export async function putActivity(
  tx: Transaction,
  registry: Registry,
  row: ActivityRow,
): Promise<ActivityRow> {
  const handler = registry.activities.get(row.path as ActivityPath) as ActivityHandler | undefined
  if (handler?.passkeyParameters)
    await sightPasskeys(tx, passkeysShownIn(row.intent, handler.passkeyParameters), {
      activityId: row.id,
      now: row.updatedAt,
      blind: handler.createsOnly === true,
    })
  return tx.put('activities', recorded(registry, row))
}

/**
 * `record` with each path emptied ('' for a string, [] for a list, else null): a path is fields
 * joined by dots, `name[]` going through each item of the list `name` (`'wallets[].encryptedBundle'`).
 * Copies what it changes; a field absent, or not the object or list the path expects, is left alone.
 */
export function cleared(record: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  let copy = record
  for (const path of paths) copy = clearPath(copy, path.split('.')) as Record<string, unknown>
  return copy
}

function clearPath(value: unknown, steps: readonly string[]): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value
  const [step, ...rest] = steps as [string, ...string[]]
  const object = value as Record<string, unknown>
  const through = step.endsWith('[]')
  const field = through ? step.slice(0, -2) : step
  if (!Object.hasOwn(object, field)) return value
  const inner = object[field]
  let next: unknown
  if (through) {
    if (!Array.isArray(inner)) return value
    next = inner.map((item) => (rest.length === 0 ? emptiedValue(item) : clearPath(item, rest)))
  } else next = rest.length === 0 ? emptiedValue(inner) : clearPath(inner, rest)
  return next === inner ? value : { ...object, [field]: next }
}

const emptiedValue = (value: unknown) => (Array.isArray(value) ? [] : typeof value === 'string' ? '' : null)

/** Lets a handler answer with another activity than itself (approve/reject answer with the voted one). */
export function respondWith(ctx: ActivityContext, activityId: string, row?: ActivityRow): void {
  const responds = ctx as ActivityContext & Responds
  responds.respondWith = activityId
  if (row) responds.respondWithRow = row
}

/** What a handler answering with another activity leaves on its context. */
interface Responds {
  respondWith?: string
  respondWithRow?: ActivityRow
}
