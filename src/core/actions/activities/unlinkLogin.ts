import type { ActivityPath } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import type { LinkedLogin } from '../queries/getLinkedLogins.ts'
import { mfaUserId } from './mfaUser.ts'

export type UnlinkLoginParameters = {
  /** A login from `getLinkedLogins`. */
  login: Pick<LinkedLogin, 'kind' | 'id'>
  /** @default the session's user */
  userId?: string | undefined
} & ActionOptions
export type UnlinkLoginReturnType = { userId: string }

/** The activity that removes each kind of login, and its parameters. */
function removal(
  login: UnlinkLoginParameters['login'],
  userId: string,
): [ActivityPath, Record<string, unknown>] {
  switch (login.kind) {
    case 'email':
      return ['update_user_email', { userId, userEmail: '' }]
    case 'phone':
      return ['update_user_phone_number', { userId, userPhoneNumber: '' }]
    case 'oauth':
      return ['delete_oauth_providers', { userId, providerIds: [login.id] }]
    case 'passkey':
      return ['delete_authenticators', { userId, authenticatorIds: [login.id] }]
    default:
      return ['delete_api_keys', { userId, apiKeyIds: [login.id] }]
  }
}

/**
 * Removes one way into the account: clears the e-mail or phone, unlinks an OAuth identity, deletes
 * a passkey, wallet or API key. The service refuses (400 `FIELD_INVALID` naming the field) when it
 * is the only root user's last way in; an MFA policy on the user makes it throw `MfaRequiredError`
 * (prove the step with `completeMfa`, which answers `{ userId }`).
 */
export async function unlinkLogin(
  client: Latchkey,
  parameters: UnlinkLoginParameters,
): Promise<UnlinkLoginReturnType> {
  const [{ login, userId: given }, options] = splitOptions(parameters)
  const userId = await mfaUserId(client, { userId: given, sessionId: options.sessionId })
  const [path, activityParameters] = removal(login, userId)
  return thenOrResume(submit(client, path, activityParameters as never, options), () => ({ userId }))
}
