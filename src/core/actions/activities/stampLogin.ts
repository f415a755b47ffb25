import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type StampLoginParameters = ActivityParameters<'stamp_login'> & ActionOptions
export type StampLoginReturnType = ActivityResult<'stamp_login'>

/** `stamp_login`: a read-write session for `publicKey`, authorised by whoever stamps it. */
export async function stampLogin(
  client: Latchkey,
  parameters: StampLoginParameters,
): Promise<StampLoginReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'stamp_login', activityParameters as ActivityParameters<'stamp_login'>, options),
    ({ result }) => result,
  )
}
