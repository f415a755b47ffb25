import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type VerifyOtpParameters = ActivityParameters<'verify_otp'> & ActionOptions
export type VerifyOtpReturnType = ActivityResult<'verify_otp'>

/** `verify_otp` submitted directly (apps use the proxy flow, `completeOtpSignIn`). */
export async function verifyOtp(
  client: Latchkey,
  parameters: VerifyOtpParameters,
): Promise<VerifyOtpReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return (await submit(client, 'verify_otp', activityParameters as ActivityParameters<'verify_otp'>, options))
    .result
}
