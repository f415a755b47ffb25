import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type CreateSubOrganizationParameters = ActivityParameters<'create_sub_organization'> & ActionOptions
export type CreateSubOrganizationReturnType = ActivityResult<'create_sub_organization'>

/** Creates a sub-organization (`create_sub_organization`, V7). */
export async function createSubOrganization(
  client: Latchkey,
  parameters: CreateSubOrganizationParameters,
): Promise<CreateSubOrganizationReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(
      client,
      'create_sub_organization',
      activityParameters as ActivityParameters<'create_sub_organization'>,
      options,
    ),
    ({ result }) => result,
  )
}
