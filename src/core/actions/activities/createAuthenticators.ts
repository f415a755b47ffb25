import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type CreateAuthenticatorsParameters = ActivityParameters<'create_authenticators'> & ActionOptions
export type CreateAuthenticatorsReturnType = ActivityResult<'create_authenticators'>

/** Adds passkeys to a user (`create_authenticators`). */
export async function createAuthenticators(
  client: Latchkey,
  parameters: CreateAuthenticatorsParameters,
): Promise<CreateAuthenticatorsReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(
      client,
      'create_authenticators',
      activityParameters as ActivityParameters<'create_authenticators'>,
      options,
    ),
    ({ result }) => result,
  )
}
