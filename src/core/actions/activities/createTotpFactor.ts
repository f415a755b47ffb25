import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import { mfaUserId } from './mfaUser.ts'

export type CreateTotpFactorParameters = Omit<ActivityParameters<'latchkey_create_totp_factor'>, 'userId'> & {
  /** @default the session's user */
  userId?: string | undefined
} & ActionOptions
export type CreateTotpFactorReturnType = ActivityResult<'latchkey_create_totp_factor'>

/**
 * Enrols a TOTP factor (`latchkey_create_totp_factor`), unconfirmed: its base32 `secret` and
 * `otpauth://` URI (for a QR code) are answered once. Confirm it with `confirmTotpFactor`. Once the
 * user has a factor or an MFA policy, it waits for them (`MfaRequiredError`).
 */
export async function createTotpFactor(
  client: Latchkey,
  parameters: CreateTotpFactorParameters,
): Promise<CreateTotpFactorReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  const userId = await mfaUserId(client, { userId: activityParameters.userId, sessionId: options.sessionId })
  return thenOrResume(
    submit(
      client,
      'latchkey_create_totp_factor',
      { ...activityParameters, userId } as ActivityParameters<'latchkey_create_totp_factor'>,
      options,
    ),
    ({ result }) => result,
  )
}
