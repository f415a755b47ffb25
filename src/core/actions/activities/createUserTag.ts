import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type CreateUserTagParameters = ActivityParameters<'create_user_tag'> & ActionOptions
export type CreateUserTagReturnType = ActivityResult<'create_user_tag'>

/** Creates a user tag (`create_user_tag`). */
export async function createUserTag(
  client: Latchkey,
  parameters: CreateUserTagParameters,
): Promise<CreateUserTagReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'create_user_tag', activityParameters as ActivityParameters<'create_user_tag'>, options),
    ({ result }) => result,
  )
}
