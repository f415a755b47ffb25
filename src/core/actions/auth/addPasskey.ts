import { requireSession } from '../../session/sessions.ts'
import { webAuthnStamper } from '../../stampers/webAuthnStamper.ts'
import { query, submit } from '../../transport/activity.ts'
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
 * sign-up, then has it sign one request naming the user's organization (a second prompt): a
 * registration proves nothing about who holds the passkey, so the service routes its sign-ins
 * from the parent organization (`signInWithPasskey`) only once it did.
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
  await query(
    client,
    'whoami',
    { organizationId: session.organizationId },
    { stamper: webAuthnStamper({ ...client.config.passkey, allowCredentialIds: [credentialId] }) },
  )
  return { authenticatorId: result.authenticatorIds[0] as string, credentialId }
}
