import { generateSigningKey } from '../../keyStore/createKeyStore.ts'
import { addSessionFromJwt } from '../../session/sessions.ts'
import type { Session } from '../../session/types.ts'
import { apiKeyStamper } from '../../stampers/apiKeyStamper.ts'
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

/** How long the sign-up's own key lives: long enough for the one `stamp_login` it signs. */
const SIGN_UP_KEY_SECONDS = 60

/**
 * Creates an account whose root credential is a new passkey, and signs in to it: one prompt, the
 * passkey's creation. The sign-up brings a second key beside the passkey, made here and never
 * stored (non-extractable, in memory), that lives 60 seconds; it signs the `stamp_login` that
 * opens the session (with the stored session key), so the person is not asked to sign with the
 * passkey they have just made. The service holds a passkey whose registration is the first
 * record to show it as its holder's, so its later sign-ins from the parent organization route
 * to this account.
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
    const signUpKey = await generateSigningKey()
    const { organizationId, userId } = await proxySignup(
      client,
      {
        userName: parameters.userName,
        ...(parameters.userEmail ? { userEmail: parameters.userEmail } : {}),
        authenticators: [authenticator],
        apiKeys: [
          {
            apiKeyName: `sign-up ${signUpKey.publicKey.slice(0, 16)}`,
            publicKey: signUpKey.publicKey,
            curveType: 'API_KEY_CURVE_P256',
            expirationSeconds: String(SIGN_UP_KEY_SECONDS),
          },
        ],
        oauthProviders: [],
      },
      { signal: parameters.signal },
    )
    const jwt = await loginWithStamper(client, {
      key,
      stamper: apiKeyStamper(signUpKey),
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
