import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import { mfaUserId } from './mfaUser.ts'

export type DeleteMfaPolicyParameters = Omit<ActivityParameters<'delete_mfa_policy'>, 'userId'> & {
  /** @default the session's user */
  userId?: string | undefined
} & ActionOptions
export type DeleteMfaPolicyReturnType = ActivityResult<'delete_mfa_policy'>

/**
 * Removes an MFA policy (`delete_mfa_policy`); by the user it is on, it waits for that policy.
 */
export async function deleteMfaPolicy(
  client: Latchkey,
  parameters: DeleteMfaPolicyParameters,
): Promise<DeleteMfaPolicyReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  const userId = await mfaUserId(client, { userId: activityParameters.userId, sessionId: options.sessionId })
  return thenOrResume(
    submit(
      client,
      'delete_mfa_policy',
      { ...activityParameters, userId } as ActivityParameters<'delete_mfa_policy'>,
      options,
    ),
    ({ result }) => result,
  )
}
