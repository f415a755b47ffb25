import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type UpdateUserTagParameters = ActivityParameters<'update_user_tag'> & ActionOptions
export type UpdateUserTagReturnType = ActivityResult<'update_user_tag'>

/** Renames a user tag and adds/removes users, atomically (`update_user_tag`). */
export async function updateUserTag(
  client: Latchkey,
  parameters: UpdateUserTagParameters,
): Promise<UpdateUserTagReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'update_user_tag', activityParameters as ActivityParameters<'update_user_tag'>, options),
    ({ result }) => result,
  )
}
