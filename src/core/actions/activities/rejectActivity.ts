import type { Activity } from '@latchkey/protocol'
import { submitActivity } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type RejectActivityParameters = {
  /** `fingerprint` of the activity waiting for consensus. */
  fingerprint: string
} & ActionOptions
/** The voted-on activity, in its new state (it executes once enough root users approved). */
export type RejectActivityReturnType = Activity

/** Votes to reject an activity waiting for consensus (`reject_activity`). */
export async function rejectActivity(
  client: Latchkey,
  parameters: RejectActivityParameters,
): Promise<RejectActivityReturnType> {
  const [{ fingerprint }, options] = splitOptions(parameters)
  return submitActivity(client, 'reject_activity', { fingerprint }, options)
}
