import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type OtpLoginParameters = ActivityParameters<'otp_login'> & ActionOptions
export type OtpLoginReturnType = ActivityResult<'otp_login'>

/** `otp_login` submitted directly (apps use the proxy flow, `completeOtpSignIn`). */
export async function otpLogin(
  client: Latchkey,
  parameters: OtpLoginParameters,
): Promise<OtpLoginReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return (await submit(client, 'otp_login', activityParameters as ActivityParameters<'otp_login'>, options))
    .result
}
