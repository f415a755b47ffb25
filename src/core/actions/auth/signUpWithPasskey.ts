import { addSessionFromJwt } from '../../session/sessions.ts'
import type { Session } from '../../session/types.ts'
import { webAuthnStamper } from '../../stampers/webAuthnStamper.ts'
import type { Latchkey } from '../../types.ts'
import { proxySignup } from '../proxy/proxySignup.ts'
import { loginWithStamper } from './loginWithStamper.ts'
import { registerPasskey } from './registerPasskey.ts'
import { withSessionKey } from './withSessionKey.ts'

export type SignUpWithPasskeyParameters = {
  /** Shown by the authenticator and stored as the user's name. */
  userName: string
  userEmail?: string | undefined
  /** @default `${userName}'s passkey` */
  authenticatorName?: string | undefined
  signal?: AbortSignal | undefined
}
export type SignUpWithPasskeyReturnType = {
  session: Session
  organizationId: string
  userId: string
  credentialId: string
}

/**
 * Creates an account whose root credential is a new passkey, then signs in to it with that passkey
 * (two prompts: create, then sign). A registration proves nothing about who holds the passkey (a
 * "none" attestation signs nothing), so the service routes the passkey's later sign-ins from the
 * parent organization only once it signed a request naming its own account: this sign-in does,
 * as a wallet sign-up's does.
 */
export function signUpWithPasskey(
  client: Latchkey,
  parameters: SignUpWithPasskeyParameters,
): Promise<SignUpWithPasskeyReturnType> {
  return withSessionKey(client, async (key) => {
    const authenticator = await registerPasskey(client, {
      userName: parameters.userEmail ?? parameters.userName,
      displayName: parameters.userName,
      authenticatorName: parameters.authenticatorName ?? `${parameters.userName}'s passkey`,
    })
    const { credentialId } = authenticator.attestation
    const { organizationId, userId } = await proxySignup(
      client,
      {
        userName: parameters.userName,
        ...(parameters.userEmail ? { userEmail: parameters.userEmail } : {}),
        authenticators: [authenticator],
        apiKeys: [],
        oauthProviders: [],
      },
      { signal: parameters.signal },
    )
    const jwt = await loginWithStamper(client, {
      key,
      stamper: webAuthnStamper({ ...client.config.passkey, allowCredentialIds: [credentialId] }),
      organizationId,
      resolveOrganization: async () => organizationId,
      signal: parameters.signal,
    })
    const session = addSessionFromJwt(client, {
      session: jwt,
      method: 'passkey',
      label: parameters.userEmail ?? parameters.userName,
    })
    return { session, organizationId, userId, credentialId }
  })
}
