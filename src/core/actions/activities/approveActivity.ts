import type { Activity } from '@latchkey/protocol'
import { submitActivity } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type ApproveActivityParameters = {
  /** `fingerprint` of the activity waiting for consensus. */
  fingerprint: string
} & ActionOptions
/** The voted-on activity, in its new state (it executes once enough root users approved). */
export type ApproveActivityReturnType = Activity

/** Votes to approve an activity waiting for consensus (`approve_activity`). */
export async function approveActivity(
  client: Latchkey,
  parameters: ApproveActivityParameters,
): Promise<ApproveActivityReturnType> {
  const [{ fingerprint }, options] = splitOptions(parameters)
  return submitActivity(client, 'approve_activity', { fingerprint }, options)
}
