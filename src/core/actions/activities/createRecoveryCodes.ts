import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import { mfaUserId } from './mfaUser.ts'

export type CreateRecoveryCodesParameters = Omit<
  ActivityParameters<'latchkey_create_recovery_codes'>,
  'userId'
> & {
  /** @default the session's user */
  userId?: string | undefined
} & ActionOptions
export type CreateRecoveryCodesReturnType = ActivityResult<'latchkey_create_recovery_codes'>

/**
 * Ten single-use recovery codes (`latchkey_create_recovery_codes`), replacing earlier ones.
 * Shown once: the service keeps only their hashes.
 */
export async function createRecoveryCodes(
  client: Latchkey,
  parameters: CreateRecoveryCodesParameters,
): Promise<CreateRecoveryCodesReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  const userId = await mfaUserId(client, { userId: activityParameters.userId, sessionId: options.sessionId })
  return thenOrResume(
    submit(
      client,
      'latchkey_create_recovery_codes',
      { ...activityParameters, userId } as ActivityParameters<'latchkey_create_recovery_codes'>,
      options,
    ),
    ({ result }) => result,
  )
}
