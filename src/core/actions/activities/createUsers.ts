import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type CreateUsersParameters = ActivityParameters<'create_users'> & ActionOptions
export type CreateUsersReturnType = ActivityResult<'create_users'>

/** Adds non-root users, e.g. an app back end with an API key (`create_users`). */
export async function createUsers(
  client: Latchkey,
  parameters: CreateUsersParameters,
): Promise<CreateUsersReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'create_users', activityParameters as ActivityParameters<'create_users'>, options),
    ({ result }) => result,
  )
}
