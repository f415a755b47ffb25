import type { PolicyOutcome } from '@latchkey/protocol'
import { ApiError } from '../errors.ts'
import type { Runtime } from '../Runtime.ts'
import type { ActivityHandler, Caller } from '../registry.ts'
import type { ActivityRow, OrganizationRow } from '../store/model.ts'
import type { Transaction } from '../store/Store.ts'

/**
 * Who may make an activity happen, decided in one place: when it is submitted
 * (`decideActivity`) and on every vote while it awaits consensus (`decideAfterVote`). Each
 * decision is recorded as a policy evaluation, read back through `get_policy_evaluations`.
 */

export type Decision =
  | { outcome: 'OUTCOME_ALLOW' }
  | { outcome: 'OUTCOME_REQUIRES_CONSENSUS' }
  | { outcome: 'OUTCOME_DENY_IMPLICIT' | 'OUTCOME_DENY_EXPLICIT'; error: ApiError }

export interface DecisionInput {
  tx: Transaction
  service: Runtime
  /** The activity just recorded (status CREATED). */
  row: ActivityRow
  /** The organization it acts in. */
  organization: OrganizationRow
  caller: Caller
  handler: ActivityHandler
  /** Its parameters, parsed by the handler. */
  parameters: unknown
}

export function recordEvaluation(
  tx: Transaction,
  service: Runtime,
  activity: ActivityRow,
  outcome: PolicyOutcome,
  voteId = '',
): void {
  const now = service.now()
  tx.put('policyEvaluations', {
    id: service.newId(),
    activityId: activity.id,
    organizationId: activity.organizationId,
    voteId,
    outcomes: [{ outcome }],
    createdAt: now,
    updatedAt: now,
  })
}

export function recordVote(
  tx: Transaction,
  service: Runtime,
  activity: ActivityRow,
  caller: Caller,
  selection: 'VOTE_SELECTION_APPROVED' | 'VOTE_SELECTION_REJECTED',
): string {
  const now = service.now()
  const id = service.newId()
  tx.put('votes', {
    id,
    organizationId: activity.organizationId,
    activityId: activity.id,
    userId: caller.userId,
    selection,
    message: activity.fingerprint,
    publicKey: caller.credential.publicKey,
    signature: caller.credential.signature,
    scheme: caller.credential.scheme,
    createdAt: now,
    updatedAt: now,
  })
  return id
}

/**
 * A new activity: a non-root user of the organization is refused unless the handler admits
 * non-root callers (sign-in); a root user waits for the root quorum when it is above one (the
 * submission is the first approval); everything else is allowed.
 */
export function decideActivity({ tx, service, row, organization, caller, handler }: DecisionInput): Decision {
  const sameOrganization = caller.organizationId === organization.id
  const isRoot = sameOrganization && organization.rootUserIds.includes(caller.userId)
  if (sameOrganization && !isRoot && !handler.allowNonRoot) {
    recordEvaluation(tx, service, row, 'OUTCOME_DENY_IMPLICIT')
    return {
      outcome: 'OUTCOME_DENY_IMPLICIT',
      error: new ApiError(
        'PERMISSION_DENIED',
        `only root users of organization ${organization.id} may submit ${row.path}`,
      ),
    }
  }
  if (isRoot && organization.rootQuorumThreshold > 1 && !handler.skipConsensus) {
    const voteId = recordVote(tx, service, row, caller, 'VOTE_SELECTION_APPROVED')
    recordEvaluation(tx, service, row, 'OUTCOME_REQUIRES_CONSENSUS', voteId)
    return { outcome: 'OUTCOME_REQUIRES_CONSENSUS' }
  }
  recordEvaluation(tx, service, row, 'OUTCOME_ALLOW')
  return { outcome: 'OUTCOME_ALLOW' }
}

export interface VoteInput {
  tx: Transaction
  service: Runtime
  /** The activity awaiting consensus. */
  activity: ActivityRow
  organization: OrganizationRow
  caller: Caller
  selection: 'VOTE_SELECTION_APPROVED' | 'VOTE_SELECTION_REJECTED'
}

/**
 * Records a root user's vote: approvals reaching the root quorum threshold allow the activity;
 * so many rejections that the threshold can no longer be reached reject it; otherwise it waits.
 */
export function decideAfterVote({
  tx,
  service,
  activity,
  organization,
  caller,
  selection,
}: VoteInput): 'OUTCOME_ALLOW' | 'OUTCOME_REJECTED' | 'OUTCOME_REQUIRES_CONSENSUS' {
  const votes = tx.findBy('votes', 'activityId', activity.id)
  if (votes.some((vote) => vote.userId === caller.userId))
    throw new ApiError(
      'ALREADY_VOTED',
      `you already voted on activity ${activity.id}`,
      'parameters.fingerprint',
    )
  const voteId = recordVote(tx, service, activity, caller, selection)
  const approvals =
    votes.filter((vote) => vote.selection === 'VOTE_SELECTION_APPROVED').length +
    (selection === 'VOTE_SELECTION_APPROVED' ? 1 : 0)
  const rejections = votes.length + 1 - approvals
  const threshold = organization.rootQuorumThreshold
  const outcome =
    approvals >= threshold
      ? 'OUTCOME_ALLOW'
      : organization.rootUserIds.length - rejections < threshold
        ? 'OUTCOME_REJECTED'
        : 'OUTCOME_REQUIRES_CONSENSUS'
  recordEvaluation(tx, service, activity, outcome, voteId)
  return outcome
}
