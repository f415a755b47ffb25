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
 * The wire form of an activity at `now`. `canApprove`/`canReject` are answered for `viewer`: true
 * only while the activity awaits consensus, the viewer is a user of its organization (a root user,
 * or an approver a policy's consensus may count) and may vote as a vote is judged (`mayVote`: it
 * has not voted, or the approval it cast no longer counts, its credential ended); one a gate holds
 * (MFA) only its submitter may approve, and its submitter or a root user of its organization reject.
 */
export async function renderActivity(
  reads: Reads,
  row: ActivityRow,
  {
    viewer,
    knownVotes,
    now,
  }: {
    viewer?: Caller | undefined
    /** The activity's votes when the caller knows them (looked up otherwise). */
    knownVotes?: VoteRow[] | undefined
    now: number
  },
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
      (await mayVote(reads, { activity: row, votes, userId: viewer.userId, now }))
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
