import { ACTIVITIES, type Activity, type ActivityPath, type Vote, wireKeysOf } from '@latchkey/protocol'
import { mapInOrder } from '../kernel/base/async.ts'
import { timestampOf } from '../kernel/base/ids.ts'
import type { Caller } from '../kernel/registry.ts'
import type { ActivityRow, VoteRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'
import { mayVote } from './decideActivity.ts'

export async function renderVote(reads: Reads, vote: VoteRow): Promise<Vote> {
  return {
    id: vote.id,
    userId: vote.userId,
    user: { userId: vote.userId, userName: (await reads.get('users', vote.userId))?.userName ?? '' },
    activityId: vote.activityId,
    selection: vote.selection,
    message: vote.message,
    publicKey: vote.publicKey,
    signature: vote.signature,
    scheme: vote.scheme,
    createdAt: timestampOf(vote.createdAt),
  }
}

/**
 * The wire form of an activity. `canApprove`/`canReject` are answered for `viewer`: true only
 * while the activity awaits consensus, the viewer is a user of its organization (a root user, or
 * an approver a policy's consensus may count) and has not voted yet; one a gate holds (MFA) only
 * its submitter may approve, and its submitter or a root user of its organization reject. The
 * answer of a submission, whose caller has just submitted or voted; `renderActivityAt` judges
 * the viewer's votes as a vote would.
 */
export function renderActivity(
  reads: Reads,
  row: ActivityRow,
  viewer?: Caller,
  /** The activity's votes when the caller knows them (looked up otherwise). */
  knownVotes?: VoteRow[],
): Promise<Activity> {
  return render(reads, row, { viewer, knownVotes })
}

/**
 * The wire form of an activity for `viewer` at `now` (`get_activity`): as `renderActivity`, but a
 * viewer who voted may still be told `canApprove`/`canReject` when they may vote again
 * (`mayVote`, as the vote itself is judged: the approval they cast no longer counts, its
 * credential ended). One check, of the viewer's own vote.
 */
export function renderActivityAt(
  reads: Reads,
  row: ActivityRow,
  viewer: Caller,
  now: number,
): Promise<Activity> {
  return render(reads, row, { viewer, now })
}

async function render(
  reads: Reads,
  row: ActivityRow,
  {
    viewer,
    knownVotes,
    now,
  }: { viewer?: Caller | undefined; knownVotes?: VoteRow[] | undefined; now?: number },
): Promise<Activity> {
  const definition = ACTIVITIES[row.path as ActivityPath]
  // An activity submitted as an older accepted type answers under that type's keys.
  const keys = row.type === definition.type ? definition : wireKeysOf(row.path, definition, row.type)
  const votes = knownVotes ?? (await reads.findBy('votes', 'activityId', row.id))
  // An activity awaiting authenticators is open to its submitter only (their factors satisfy it);
  // a root user of its organization may reject it too.
  const held = row.status === 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'
  let open = row.status === 'ACTIVITY_STATUS_CONSENSUS_NEEDED' || (held && viewer?.userId === row.userId)
  if (open && viewer && !held) {
    open =
      viewer.organizationId === row.organizationId &&
      !viewer.readOnly &&
      (now === undefined
        ? !votes.some((vote) => vote.userId === viewer.userId)
        : await mayVote(reads, { activity: row, votes, userId: viewer.userId, now }))
  }
  const rejectable =
    open ||
    (held &&
      viewer !== undefined &&
      !viewer.readOnly &&
      viewer.organizationId === row.organizationId &&
      Boolean((await reads.get('organizations', row.organizationId))?.rootUserIds.includes(viewer.userId)))
  return {
    id: row.id,
    organizationId: row.organizationId,
    status: row.status,
    type: row.type,
    intent: { [keys.intentKey]: row.intent },
    result: row.result ? { [keys.resultKey]: row.result } : {},
    votes: await mapInOrder(votes, (vote) => renderVote(reads, vote)),
    fingerprint: row.fingerprint,
    canApprove: open,
    canReject: rejectable,
    createdAt: timestampOf(row.createdAt),
    updatedAt: timestampOf(row.updatedAt),
    ...(row.failure ? { failure: row.failure } : {}),
  }
}
