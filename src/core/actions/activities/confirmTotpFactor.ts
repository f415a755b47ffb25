import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import { mfaUserId } from './mfaUser.ts'

export type ConfirmTotpFactorParameters = Omit<
  ActivityParameters<'latchkey_confirm_totp_factor'>,
  'userId'
> & {
  /** @default the session's user */
  userId?: string | undefined
} & ActionOptions
export type ConfirmTotpFactorReturnType = ActivityResult<'latchkey_confirm_totp_factor'>

/**
 * Confirms a TOTP factor with a first code from the authenticator app (`latchkey_confirm_totp_factor`).
 * A wrong code is `OTP_INVALID`; too many tries `OTP_ATTEMPTS_EXCEEDED` (with `details.retryAfterSeconds`).
 */
export async function confirmTotpFactor(
  client: Latchkey,
  parameters: ConfirmTotpFactorParameters,
): Promise<ConfirmTotpFactorReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  const userId = await mfaUserId(client, { userId: activityParameters.userId, sessionId: options.sessionId })
  return thenOrResume(
    submit(
      client,
      'latchkey_confirm_totp_factor',
      { ...activityParameters, userId } as ActivityParameters<'latchkey_confirm_totp_factor'>,
      options,
    ),
    ({ result }) => result,
  )
}
