import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type Oauth2AuthenticateParameters = ActivityParameters<'oauth2_authenticate'> & ActionOptions
export type Oauth2AuthenticateReturnType = ActivityResult<'oauth2_authenticate'>

/** `oauth2_authenticate` submitted directly (apps use `signInWithOAuth`). */
export async function oauth2Authenticate(
  client: Latchkey,
  parameters: Oauth2AuthenticateParameters,
): Promise<Oauth2AuthenticateReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(
      client,
      'oauth2_authenticate',
      activityParameters as ActivityParameters<'oauth2_authenticate'>,
      options,
    ),
    ({ result }) => result,
  )
}
