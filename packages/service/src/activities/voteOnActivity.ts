import { ConflictError, NotFoundError } from '../kernel/base/errors.ts'
import type { ActivityContext } from '../kernel/registry.ts'
import type { ActivityRow } from '../kernel/store/model.ts'
import { recordActivityEvents } from '../pipeline/activityEvents.ts'
import { decideAfterVote } from '../pipeline/decideActivity.ts'
import { executeActivity, respondWith } from '../pipeline/executeActivity.ts'
import { gateOf, heldBy } from '../pipeline/gates.ts'

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

/**
 * Runs an activity that waited (for consensus or authenticators) as its submitter, in the
 * current transaction; its failure is recorded on it, not on the activity that let it run.
 */
export async function runAsSubmitter(ctx: ActivityContext, activity: ActivityRow): Promise<void> {
  const { tx, runtime, organization } = ctx
  const submitter = await tx.get('users', activity.userId)
  const submitterOrganization = submitter?.organizationId ?? activity.callerOrganizationId
  // A session key issued under a profile still counts against the profile's spending limits.
  const sessionProfileId = (await tx.get('apiKeys', activity.credentialId))?.sessionProfileId
  const execution = await executeActivity({
    tx,
    runtime,
    registry: ctx.registry,
    row: activity,
    organization,
    caller: {
      userId: activity.userId,
      organizationId: submitterOrganization,
      credential: {
        kind: 'API_KEY',
        id: activity.credentialId,
        publicKey: '',
        scheme: '',
        signature: '',
        ...(sessionProfileId !== undefined ? { sessionProfileId } : {}),
      },
      readOnly: false,
    },
  })
  // What the waiting activity reported is emitted when this transaction commits.
  for (const [name, data] of execution.reported ?? []) ctx.report(name, data as never)
  await recordActivityEvents(runtime, tx, {
    row: execution.row,
    organization,
    outcome: undefined,
    later: true,
  })
  // What it shows only once (a TOTP secret, recovery codes) reaches the one who let it run.
  respondWith(ctx, activity.id, execution.row)
}

/** A waiting activity's new status (rejected, or held by a gate), with its ACTIVITY_UPDATES event. */
async function changeStatus(ctx: ActivityContext, activity: ActivityRow, status: ActivityRow['status']) {
  const row = await ctx.tx.put('activities', { ...activity, status, updatedAt: ctx.runtime.now() })
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
  // Its submitter may withdraw an activity a gate holds; nobody else decides on it.
  if (gate && caller.userId === activity.userId) {
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
    const submitter = await tx.get('users', activity.userId)
    const holder = await heldBy(ctx.registry, {
      tx,
      runtime,
      row: activity,
      organization,
      caller: {
        userId: activity.userId,
        organizationId: submitter?.organizationId ?? activity.callerOrganizationId,
        credential: { kind: 'API_KEY', id: activity.credentialId, publicKey: '', scheme: '', signature: '' },
        readOnly: false,
      },
    })
    if (holder) await changeStatus(ctx, activity, holder.status)
    else await runAsSubmitter(ctx, activity)
  } else if (outcome === 'OUTCOME_REJECTED') {
    await changeStatus(ctx, activity, 'ACTIVITY_STATUS_REJECTED')
  } else {
    await tx.put('activities', { ...activity, updatedAt: runtime.now() })
  }
  return {}
}
