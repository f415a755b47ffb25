import { ServiceError } from '../errors.ts'
import { executeActivity, recordEvaluation, recordVote, respondWith } from '../pipeline/submitActivity.ts'
import type { ActivityContext } from '../registry.ts'

/**
 * Records a root user's vote on an activity awaiting consensus (found by fingerprint). When
 * approvals reach the root quorum threshold the activity runs as its submitter; when so many
 * root users rejected that the threshold can no longer be reached it becomes REJECTED.
 */
export async function voteOnActivity(
  ctx: ActivityContext,
  fingerprint: string,
  selection: 'VOTE_SELECTION_APPROVED' | 'VOTE_SELECTION_REJECTED',
): Promise<Record<string, never>> {
  const { tx, service, organization, caller } = ctx
  const activity = tx
    .findBy('activities', 'fingerprint', fingerprint)
    .find((row) => row.organizationId === organization.id)
  if (!activity)
    throw new ServiceError(
      'ACTIVITY_NOT_FOUND',
      `no activity with fingerprint ${fingerprint}`,
      'parameters.fingerprint',
    )
  if (activity.status !== 'ACTIVITY_STATUS_CONSENSUS_NEEDED')
    throw new ServiceError(
      'ACTIVITY_NOT_VOTABLE',
      `activity ${activity.id} is ${activity.status}, not awaiting consensus`,
      'parameters.fingerprint',
    )
  const votes = tx.findBy('votes', 'activityId', activity.id)
  if (votes.some((vote) => vote.userId === caller.userId))
    throw new ServiceError(
      'ALREADY_VOTED',
      `you already voted on activity ${activity.id}`,
      'parameters.fingerprint',
    )
  respondWith(ctx, activity.id)
  const voteId = recordVote(tx, service, activity, caller, selection)
  const approvals =
    votes.filter((vote) => vote.selection === 'VOTE_SELECTION_APPROVED').length +
    (selection === 'VOTE_SELECTION_APPROVED' ? 1 : 0)
  const rejections = votes.length + 1 - approvals
  const threshold = organization.rootQuorumThreshold
  if (approvals >= threshold) {
    recordEvaluation(tx, service, activity, 'OUTCOME_ALLOW', voteId)
    const submitter = tx.get('users', activity.userId)
    const submitterOrganization = submitter?.organizationId ?? activity.callerOrganizationId
    // The activity runs as its submitter; its failure is recorded on it, not on the vote.
    await executeActivity(tx, service, activity, organization, {
      userId: activity.userId,
      organizationId: submitterOrganization,
      credential: { kind: 'API_KEY', id: activity.credentialId, publicKey: '', scheme: '', signature: '' },
      readOnly: false,
    })
  } else if (organization.rootUserIds.length - rejections < threshold) {
    recordEvaluation(tx, service, activity, 'OUTCOME_REJECTED', voteId)
    tx.put('activities', { ...activity, status: 'ACTIVITY_STATUS_REJECTED', updatedAt: service.now() })
  } else {
    recordEvaluation(tx, service, activity, 'OUTCOME_REQUIRES_CONSENSUS', voteId)
    tx.put('activities', { ...activity, updatedAt: service.now() })
  }
  return {}
}
