import { addSessionFromKey } from '../../session/sessions.ts'
import type { Session } from '../../session/types.ts'
import type { Latchkey } from '../../types.ts'
import { proxySignup } from '../proxy/proxySignup.ts'
import { sessionLifetimeSeconds } from './loadWalletKitConfig.ts'
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
 * Creates an account whose root credential is a new passkey (one prompt). The same `signup`
 * registers a short-lived session key, so no second passkey prompt is needed to start.
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
    const lifetimeSeconds = await sessionLifetimeSeconds(client)
    const { organizationId, userId } = await proxySignup(
      client,
      {
        userName: parameters.userName,
        ...(parameters.userEmail ? { userEmail: parameters.userEmail } : {}),
        authenticators: [authenticator],
        apiKeys: [
          {
            apiKeyName: `session ${new Date().toISOString()}`,
            publicKey: key.publicKey,
            curveType: 'API_KEY_CURVE_P256',
            expirationSeconds: String(lifetimeSeconds),
          },
        ],
        oauthProviders: [],
      },
      { signal: parameters.signal },
    )
    const session = addSessionFromKey(client, {
      publicKey: key.publicKey,
      userId,
      organizationId,
      lifetimeSeconds,
      method: 'passkey',
      label: parameters.userEmail ?? parameters.userName,
    })
    return { session, organizationId, userId, credentialId: authenticator.attestation.credentialId }
  })
}
