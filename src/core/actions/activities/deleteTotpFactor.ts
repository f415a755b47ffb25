import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import { mfaUserId } from './mfaUser.ts'

export type DeleteTotpFactorParameters = Omit<ActivityParameters<'latchkey_delete_totp_factor'>, 'userId'> & {
  /** @default the session's user */
  userId?: string | undefined
} & ActionOptions
export type DeleteTotpFactorReturnType = ActivityResult<'latchkey_delete_totp_factor'>

/**
 * Removes a TOTP factor (`latchkey_delete_totp_factor`); waits for the user's MFA policies
 * (`MfaRequiredError`) while they hold a factor or a policy.
 */
export async function deleteTotpFactor(
  client: Latchkey,
  parameters: DeleteTotpFactorParameters,
): Promise<DeleteTotpFactorReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  const userId = await mfaUserId(client, { userId: activityParameters.userId, sessionId: options.sessionId })
  return thenOrResume(
    submit(
      client,
      'latchkey_delete_totp_factor',
      { ...activityParameters, userId } as ActivityParameters<'latchkey_delete_totp_factor'>,
      options,
    ),
    ({ result }) => result,
  )
}
