import { requireSession } from '../../session/sessions.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { getUser } from '../queries/getUser.ts'
import { registerPasskey } from './registerPasskey.ts'

export type AddPasskeyParameters = {
  /** @default the session's user */
  userId?: string | undefined
  /** @default `Passkey <date>` */
  authenticatorName?: string | undefined
  sessionId?: string | undefined
}
export type AddPasskeyReturnType = { authenticatorId: string; credentialId: string }

/**
 * Registers a new passkey on a signed-in user (`create_authenticators`), e.g. right after an OTP
 * sign-up: one prompt, its creation. The service holds a passkey whose registration is the first
 * record to show it as its holder's, so its sign-ins from the parent organization
 * (`signInWithPasskey`) route to this user.
 */
export async function addPasskey(
  client: Latchkey,
  parameters: AddPasskeyParameters = {},
): Promise<AddPasskeyReturnType> {
  await client.hydrate()
  const session = requireSession(client, parameters.sessionId)
  const userId = parameters.userId ?? session.userId
  const { user } = await getUser(client, { userId, sessionId: session.id })
  const authenticator = await registerPasskey(client, {
    userName: user.userEmail ?? user.userName,
    displayName: user.userName,
    authenticatorName: parameters.authenticatorName ?? `Passkey ${new Date().toISOString().slice(0, 10)}`,
  })
  const { credentialId } = authenticator.attestation
  const { result } = await submit(
    client,
    'create_authenticators',
    { userId, authenticators: [authenticator] },
    { sessionId: session.id },
  )
  return { authenticatorId: result.authenticatorIds[0] as string, credentialId }
}
