import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type DeleteUsersParameters = ActivityParameters<'delete_users'> & ActionOptions
export type DeleteUsersReturnType = ActivityResult<'delete_users'>

/** Deletes non-root users with their credentials (`delete_users`). */
export async function deleteUsers(
  client: Latchkey,
  parameters: DeleteUsersParameters,
): Promise<DeleteUsersReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'delete_users', activityParameters as ActivityParameters<'delete_users'>, options),
    ({ result }) => result,
  )
}
