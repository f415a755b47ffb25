import type { ActivityPath } from '@latchkey/protocol'
import { submitterNow } from '../domain/submitters.ts'
import { ApiError, ConflictError, NotFoundError } from '../kernel/base/errors.ts'
import type { Caller } from '../kernel/Caller.ts'
import { Reader } from '../kernel/Reader.ts'
import type { ActivityContext, ActivityHandler, PolicyFacts } from '../kernel/registry.ts'
import type { ActivityRow } from '../kernel/store/model.ts'
import { isDatabaseError } from '../kernel/store/Store.ts'
import { recordActivityEvents } from '../pipeline/activityEvents.ts'
import { decideAfterVote, decideStored, recordEvaluation } from '../pipeline/decideActivity.ts'
import {
  emptied,
  executeActivity,
  type Prepared,
  prepareContext,
  putActivity,
  respondWith,
} from '../pipeline/executeActivity.ts'
import { confinedBy, gateOf, heldBy } from '../pipeline/gates.ts'

/** The activity of `ctx.organization` with this fingerprint (`field` names it), else 404. */
export async function activityByFingerprint(
  ctx: ActivityContext,
  fingerprint: string,
  field = 'parameters.fingerprint',
): Promise<ActivityRow> {
  const activity = (await ctx.tx.findBy('activities', 'fingerprint', fingerprint)).find(
    (row) => row.organizationId === ctx.organization.id,
  )
  if (!activity)
    throw new NotFoundError({
      code: 'ACTIVITY_NOT_FOUND',
      field,
      message: `no activity with fingerprint ${fingerprint}`,
    })
  return activity
}

/** Records `activity` FAILED with `error` (its ACTIVITY_UPDATES event emitted on commit). */
async function failStored(ctx: ActivityContext, activity: ActivityRow, error: ApiError): Promise<void> {
  const row = await putActivity(ctx.tx, ctx.registry, {
    ...activity,
    status: 'ACTIVITY_STATUS_FAILED',
    failure: error.toBody() as ActivityRow['failure'] & object,
    updatedAt: ctx.runtime.now(),
  })
  await recordActivityEvents(ctx.runtime, ctx.tx, {
    row,
    organization: ctx.organization,
    outcome: undefined,
    later: true,
  })
}

/**
 * Whether the stored `activity` may still run as `submitter` (`submitterNow`: a refusal when the
 * user or credential is gone or its key expired), decided as a new submission of it would be now:
 * the credential's confinement (a session profile's scope) first, then the root quorum and the
 * policies (`decideStored`, counting the approvals it gathered). The refusal, if any.
 */
async function refusalNow(
  ctx: ActivityContext,
  activity: ActivityRow,
  submitter: Caller | ApiError,
  facts: PolicyFacts | undefined,
): Promise<ApiError | undefined> {
  const { tx, runtime, registry } = ctx
  if (submitter instanceof ApiError) return submitter
  const handler = registry.activities.get(activity.path as ActivityPath) as ActivityHandler | undefined
  // No handler: `executeActivity` records ROUTE_NOT_FOUND.
  if (!handler) return undefined
  // The organization as this transaction reads it (a root quorum changed meanwhile is seen, and on
  // PostgreSQL a concurrent change conflicts with this run).
  const organization = (await tx.get('organizations', activity.organizationId)) ?? ctx.organization
  const input = { tx, runtime, row: activity, organization, caller: submitter, ...(facts ? { facts } : {}) }
  const confined = await confinedBy(registry, input)
  if (confined) {
    await recordEvaluation(tx, runtime, activity, { outcome: 'OUTCOME_DENY_EXPLICIT' })
    return confined
  }
  let vouched = false
  if (handler.allowNonRoot)
    for (const plugin of registry.plugins)
      if (
        await plugin.vouchesFor?.(
          { path: activity.path, caller: submitter, organization, reads: tx },
          runtime,
        )
      )
        vouched = true
  const decision = await decideStored({
    tx,
    runtime,
    activity,
    organization,
    caller: submitter,
    handler,
    vouched,
    ...(facts ? { facts } : {}),
  })
  return decision.outcome === 'OUTCOME_ALLOW' ? undefined : decision.error
}

/**
 * Runs an activity that waited (for consensus or authenticators) as its submitter, in the
 * current transaction; its failure is recorded on it, not on the activity that let it run. It is
 * decided again first (`refusalNow`): one its submitter may no longer make (removed from the root
 * quorum, a credential deleted or expired, a session profile narrowed) fails with the refusal a
 * new submission would get, and does not run. `preparedAlready`: what `preparedNow` gave for this
 * run, when its caller prepared it to judge it first (a vote's gates); else it is prepared here.
 */
export async function runAsSubmitter(
  ctx: ActivityContext,
  activity: ActivityRow,
  preparedAlready?: Ready,
): Promise<void> {
  const { tx, runtime, organization } = ctx
  const submitter = await submitterNow(tx, activity, ctx.now)
  const ready =
    preparedAlready ?? (submitter instanceof ApiError ? {} : await preparedNow(ctx, activity, submitter))
  const refusal = await refusalNow(ctx, activity, submitter, ready.facts)
  if (refusal || submitter instanceof ApiError) {
    await failStored(ctx, activity, refusal!)
    return
  }
  // What policies read changed since a gate last judged it (a send's fee, prepared again now): the
  // gates judge it again with what it is about to run with, keeping what was proven (an MFA
  // policy it now matches that it did not before holds it again, for that policy's steps).
  if (ready.facts) {
    const gate = await heldBy(ctx.registry, {
      tx,
      runtime,
      row: activity,
      organization,
      caller: submitter,
      facts: ready.facts,
    })
    if (gate) {
      await changeStatus(ctx, activity, gate.status)
      return
    }
  }
  const execution = await executeActivity({
    tx,
    runtime,
    registry: ctx.registry,
    row: activity,
    organization,
    caller: submitter,
    ...(ready.prepared ? { prepared: ready.prepared } : {}),
  })
  // What the waiting activity reported is emitted when this transaction commits.
  for (const [name, data] of execution.reported ?? []) ctx.report(name, data as never)
  await recordActivityEvents(runtime, tx, {
    row: execution.row,
    organization,
    outcome: undefined,
    later: true,
  })
  respondWith(ctx, activity.id, shownToRunner(ctx, activity, execution.row))
}

/** An activity prepared for its run after waiting (`preparedNow`). */
interface Ready {
  prepared?: Prepared
  facts?: PolicyFacts
}

/**
 * An activity whose policies read what its `prepare` fixes (`ActivityHandler.policyFacts`: a
 * send's fee) prepared for this run, before it is judged again: it is judged with the facts it
 * runs with, not with those of its submission (a node's fee or estimate may have changed since).
 * Other activities are prepared by `executeActivity`, once allowed. In this transaction, as every
 * activity that waited is (`ActivityHandler.prepare`).
 */
async function preparedNow(ctx: ActivityContext, activity: ActivityRow, submitter: Caller): Promise<Ready> {
  const handler = ctx.registry.activities.get(activity.path as ActivityPath) as ActivityHandler | undefined
  if (!handler?.policyFacts || !handler.prepare) return {}
  let parameters: unknown
  try {
    parameters = handler.parse(new Reader(activity.intent, 'parameters'), activity.type)
  } catch {
    // `executeActivity` fails it with the same error.
    return {}
  }
  const scope = prepareContext({
    runtime: ctx.runtime,
    registry: ctx.registry,
    organization: ctx.organization,
    caller: submitter,
    activityId: activity.id,
    type: activity.type,
  })
  try {
    const value = await handler.prepare(scope, parameters as never)
    const facts = handler.policyFacts(ctx.runtime, value)
    return { prepared: { value }, ...(facts ? { facts } : {}) }
  } catch (error) {
    if (isDatabaseError(error) || (error instanceof ApiError && error.errorCode === 'STORAGE_UNAVAILABLE'))
      throw error
    return { prepared: { error } }
  }
}

/**
 * The activity that ran, as the answer of the one who let it run: what it shows only once (a TOTP
 * secret, recovery codes) is its submitter's, answered when the submitter let it run (their code
 * or passkey proving its last step), emptied for another user (a root user's vote reaching the
 * quorum), who would otherwise hold the submitter's second factor.
 */
function shownToRunner(ctx: ActivityContext, activity: ActivityRow, ran: ActivityRow): ActivityRow {
  const handler = ctx.registry.activities.get(activity.path as ActivityPath) as ActivityHandler | undefined
  if (ctx.caller.userId === activity.userId || !handler?.shownOnce?.length || !ran.result) return ran
  return { ...ran, result: emptied(ran.result, handler.shownOnce) }
}

/** A waiting activity's new status (rejected, or held by a gate), with its ACTIVITY_UPDATES event. */
async function changeStatus(ctx: ActivityContext, activity: ActivityRow, status: ActivityRow['status']) {
  // Rejected, it has ended (`putActivity` clears what its record no longer needs); held, it has not.
  const row = await putActivity(ctx.tx, ctx.registry, { ...activity, status, updatedAt: ctx.runtime.now() })
  await recordActivityEvents(ctx.runtime, ctx.tx, {
    row,
    organization: ctx.organization,
    outcome: undefined,
    later: true,
  })
}

/**
 * Records a user's vote on an activity awaiting consensus (found by fingerprint); when the
 * decision (`decideAfterVote`) allows it, the activity runs as its submitter, unless a plugin's
 * gate (MFA) now holds it; a rejected one becomes REJECTED. An approval of an activity a gate
 * holds goes to that gate, which says when it may run.
 */
export async function voteOnActivity(
  ctx: ActivityContext,
  fingerprint: string,
  selection: 'VOTE_SELECTION_APPROVED' | 'VOTE_SELECTION_REJECTED',
): Promise<Record<string, never>> {
  const { tx, runtime, organization, caller } = ctx
  const activity = await activityByFingerprint(ctx, fingerprint)
  const gate = gateOf(ctx.registry, activity.status)
  if (gate && selection === 'VOTE_SELECTION_APPROVED') {
    respondWith(ctx, activity.id)
    if (await gate.approve(ctx, activity)) await runAsSubmitter(ctx, activity)
    return {}
  }
  // Its submitter may withdraw an activity a gate holds, and a root user of its organization may
  // reject it (one who could delete its submitter anyway); only the submitter's factors approve it.
  if (gate && (caller.userId === activity.userId || organization.rootUserIds.includes(caller.userId))) {
    respondWith(ctx, activity.id)
    await changeStatus(ctx, activity, 'ACTIVITY_STATUS_REJECTED')
    return {}
  }
  if (activity.status !== 'ACTIVITY_STATUS_CONSENSUS_NEEDED')
    throw new ConflictError({
      code: 'ACTIVITY_NOT_VOTABLE',
      field: 'parameters.fingerprint',
      message: `activity ${activity.id} is ${activity.status}, not awaiting consensus`,
    })
  respondWith(ctx, activity.id)
  const outcome = await decideAfterVote({ tx, runtime, activity, organization, caller, selection })
  if (outcome === 'OUTCOME_ALLOW') {
    const submitter = await submitterNow(tx, activity, ctx.now)
    // A submitter who is gone (or expired) is not held for a proof they cannot give: the run below
    // fails it. A send is prepared first, as its run would be: the gates judge its fee (a cheap
    // one under the passkey rule's amount is not held for it), and it runs with what they judged.
    const ready = submitter instanceof ApiError ? {} : await preparedNow(ctx, activity, submitter)
    const holder =
      !(submitter instanceof ApiError) &&
      (await heldBy(ctx.registry, {
        tx,
        runtime,
        row: activity,
        organization,
        caller: submitter,
        ...(ready.facts ? { facts: ready.facts } : {}),
      }))
    if (holder) await changeStatus(ctx, activity, holder.status)
    else await runAsSubmitter(ctx, activity, ready)
  } else if (outcome === 'OUTCOME_REJECTED') {
    await changeStatus(ctx, activity, 'ACTIVITY_STATUS_REJECTED')
  } else {
    await tx.put('activities', { ...activity, updatedAt: runtime.now() })
  }
  return {}
}
