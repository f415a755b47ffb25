import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import { mfaUserId } from './mfaUser.ts'

export type CreateMfaPolicyParameters = Omit<ActivityParameters<'create_mfa_policy'>, 'userId'> & {
  /** @default the session's user */
  userId?: string | undefined
} & ActionOptions
export type CreateMfaPolicyReturnType = ActivityResult<'create_mfa_policy'>

/**
 * Creates an MFA policy on a user (`create_mfa_policy`): their activities its condition matches
 * wait for its steps (`MfaRequiredError`).
 */
export async function createMfaPolicy(
  client: Latchkey,
  parameters: CreateMfaPolicyParameters,
): Promise<CreateMfaPolicyReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  const userId = await mfaUserId(client, { userId: activityParameters.userId, sessionId: options.sessionId })
  return thenOrResume(
    submit(
      client,
      'create_mfa_policy',
      { ...activityParameters, userId } as ActivityParameters<'create_mfa_policy'>,
      options,
    ),
    ({ result }) => result,
  )
}
