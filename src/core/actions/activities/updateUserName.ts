import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type UpdateUserNameParameters = ActivityParameters<'update_user_name'> & ActionOptions
export type UpdateUserNameReturnType = ActivityResult<'update_user_name'>

/** Renames a user (`update_user_name`). */
export async function updateUserName(
  client: Latchkey,
  parameters: UpdateUserNameParameters,
): Promise<UpdateUserNameReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'update_user_name', activityParameters as ActivityParameters<'update_user_name'>, options),
    ({ result }) => result,
  )
}
