import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type DeleteAuthenticatorsParameters = ActivityParameters<'delete_authenticators'> & ActionOptions
export type DeleteAuthenticatorsReturnType = ActivityResult<'delete_authenticators'>

/** Removes passkeys from a user (`delete_authenticators`). */
export async function deleteAuthenticators(
  client: Latchkey,
  parameters: DeleteAuthenticatorsParameters,
): Promise<DeleteAuthenticatorsReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(
      client,
      'delete_authenticators',
      activityParameters as ActivityParameters<'delete_authenticators'>,
      options,
    ),
    ({ result }) => result,
  )
}
