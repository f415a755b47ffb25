import { ConflictError, NotFoundError } from '../kernel/base/errors.ts'
import type { ActivityContext } from '../kernel/registry.ts'
import { decideAfterVote } from '../pipeline/decideActivity.ts'
import { executeActivity, respondWith } from '../pipeline/executeActivity.ts'

/**
 * Records a root user's vote on an activity awaiting consensus (found by fingerprint); when the
 * decision (`decideAfterVote`) allows it, the activity runs as its submitter; a rejected one
 * becomes REJECTED.
 */
export async function voteOnActivity(
  ctx: ActivityContext,
  fingerprint: string,
  selection: 'VOTE_SELECTION_APPROVED' | 'VOTE_SELECTION_REJECTED',
): Promise<Record<string, never>> {
  const { tx, runtime, organization, caller } = ctx
  const activity = (await tx.findBy('activities', 'fingerprint', fingerprint)).find(
    (row) => row.organizationId === organization.id,
  )
  if (!activity)
    throw new NotFoundError({
      code: 'ACTIVITY_NOT_FOUND',
      field: 'parameters.fingerprint',
      message: `no activity with fingerprint ${fingerprint}`,
    })
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
    const submitterOrganization = submitter?.organizationId ?? activity.callerOrganizationId
    // The activity runs as its submitter; its failure is recorded on it, not on the vote.
    const execution = await executeActivity({
      tx,
      runtime,
      registry: ctx.registry,
      row: activity,
      organization,
      caller: {
        userId: activity.userId,
        organizationId: submitterOrganization,
        credential: { kind: 'API_KEY', id: activity.credentialId, publicKey: '', scheme: '', signature: '' },
        readOnly: false,
      },
    })
    // What the voted activity reported is emitted when this vote's transaction commits.
    for (const [name, data] of execution.reported ?? []) ctx.report(name, data as never)
  } else if (outcome === 'OUTCOME_REJECTED') {
    await tx.put('activities', { ...activity, status: 'ACTIVITY_STATUS_REJECTED', updatedAt: runtime.now() })
  } else {
    await tx.put('activities', { ...activity, updatedAt: runtime.now() })
  }
  return {}
}
