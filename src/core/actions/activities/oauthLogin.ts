import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type OauthLoginParameters = ActivityParameters<'oauth_login'> & ActionOptions
export type OauthLoginReturnType = ActivityResult<'oauth_login'>

/** `oauth_login` submitted directly (apps use `signInWithOAuth`). */
export async function oauthLogin(
  client: Latchkey,
  parameters: OauthLoginParameters,
): Promise<OauthLoginReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'oauth_login', activityParameters as ActivityParameters<'oauth_login'>, options),
    ({ result }) => result,
  )
}
