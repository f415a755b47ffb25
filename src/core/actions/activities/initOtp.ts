import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type InitOtpParameters = ActivityParameters<'init_otp'> & ActionOptions
export type InitOtpReturnType = ActivityResult<'init_otp'>

/** `init_otp` submitted directly (apps use the proxy flow, `startOtpSignIn`). */
export async function initOtp(client: Latchkey, parameters: InitOtpParameters): Promise<InitOtpReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return (await submit(client, 'init_otp', activityParameters as ActivityParameters<'init_otp'>, options))
    .result
}
