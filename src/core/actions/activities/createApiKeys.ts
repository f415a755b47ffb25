import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type CreateApiKeysParameters = ActivityParameters<'create_api_keys'> & ActionOptions
export type CreateApiKeysReturnType = ActivityResult<'create_api_keys'>

/** Adds API keys to a user (`create_api_keys`). */
export async function createApiKeys(
  client: Latchkey,
  parameters: CreateApiKeysParameters,
): Promise<CreateApiKeysReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'create_api_keys', activityParameters as ActivityParameters<'create_api_keys'>, options),
    ({ result }) => result,
  )
}
