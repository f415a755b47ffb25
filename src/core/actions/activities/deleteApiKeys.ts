import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type DeleteApiKeysParameters = ActivityParameters<'delete_api_keys'> & ActionOptions
export type DeleteApiKeysReturnType = ActivityResult<'delete_api_keys'>

/** Deletes API keys of a user (`delete_api_keys`). */
export async function deleteApiKeys(
  client: Latchkey,
  parameters: DeleteApiKeysParameters,
): Promise<DeleteApiKeysReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'delete_api_keys', activityParameters as ActivityParameters<'delete_api_keys'>, options),
    ({ result }) => result,
  )
}
