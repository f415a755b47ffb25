import { ACTIVITIES, type Activity } from '@latchkey/protocol'
import { mfaRequiredError, submitActivity } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type ApproveActivityParameters = {
  /** `fingerprint` of the activity waiting for consensus. */
  fingerprint: string
} & ActionOptions
/** The voted-on activity, in its new state (it executes once enough root users approved). */
export type ApproveActivityReturnType = Activity

/**
 * Votes to approve an activity waiting for consensus (`approve_activity`). The vote is the voter's
 * consent: when the voter's own MFA policies would hold that activity were it theirs, the vote
 * itself waits for their second factor, and this throws `MfaRequiredError` (satisfy it with
 * `completeMfa`); its `resume` then answers with the vote, which has counted, completed (read the
 * voted-on activity again for its new state: the hooks make it stale).
 */
export async function approveActivity(
  client: Latchkey,
  parameters: ApproveActivityParameters,
): Promise<ApproveActivityReturnType> {
  const [{ fingerprint }, options] = splitOptions(parameters)
  const activity = await submitActivity(client, 'approve_activity', { fingerprint }, options)
  if (
    activity.status === 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED' &&
    activity.type === ACTIVITIES.approve_activity.type
  )
    throw await mfaRequiredError(client, { activity, resume: async (vote) => vote, options })
  return activity
}
