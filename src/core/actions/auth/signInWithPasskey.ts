import type { Latchkey } from '../../createLatchkey.ts'
import { addSessionFromJwt } from '../../session/sessions.ts'
import type { Session } from '../../session/types.ts'
import { webAuthnStamper } from '../../stampers/webAuthnStamper.ts'
import { submit } from '../../transport/activity.ts'
import { sessionLifetimeSeconds } from './loadWalletKitConfig.ts'
import { withSessionKey } from './withSessionKey.ts'

export type SignInWithPasskeyParameters = {
  /** Limit the prompt to these credential ids (base64url). @default any discoverable passkey */
  allowCredentialIds?: string[] | undefined
  signal?: AbortSignal | undefined
}
export type SignInWithPasskeyReturnType = { session: Session }

/**
 * Passkey login: `stamp_login` for a new non-extractable session key, stamped `X-Stamp-WebAuthn`
 * and addressed to the parent organization (the service finds the user's sub-organization
 * from the credential).
 */
export function signInWithPasskey(
  client: Latchkey,
  parameters: SignInWithPasskeyParameters = {},
): Promise<SignInWithPasskeyReturnType> {
  return withSessionKey(client, async (key) => {
    const options = client.config.passkey ?? {}
    const { result } = await submit(
      client,
      'stamp_login',
      { publicKey: key.publicKey, expirationSeconds: String(await sessionLifetimeSeconds(client)) },
      {
        organizationId: client.config.organizationId,
        stamper: webAuthnStamper({ ...options, allowCredentialIds: parameters.allowCredentialIds }),
        signal: parameters.signal,
      },
    )
    return { session: addSessionFromJwt(client, { session: result.session, method: 'passkey' }) }
  })
}
