import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import { mfaUserId } from './mfaUser.ts'

export type UpdateMfaPolicyParameters = Omit<ActivityParameters<'update_mfa_policy'>, 'userId'> & {
  /** @default the session's user */
  userId?: string | undefined
} & ActionOptions
export type UpdateMfaPolicyReturnType = ActivityResult<'update_mfa_policy'>

/**
 * Changes an MFA policy (`update_mfa_policy`); by the user it is on, it waits for that policy.
 */
export async function updateMfaPolicy(
  client: Latchkey,
  parameters: UpdateMfaPolicyParameters,
): Promise<UpdateMfaPolicyReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  const userId = await mfaUserId(client, { userId: activityParameters.userId, sessionId: options.sessionId })
  return thenOrResume(
    submit(
      client,
      'update_mfa_policy',
      { ...activityParameters, userId } as ActivityParameters<'update_mfa_policy'>,
      options,
    ),
    ({ result }) => result,
  )
}
