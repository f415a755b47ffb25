import { addSessionFromJwt } from '../../session/sessions.ts'
import type { Session } from '../../session/types.ts'
import type { Stamper } from '../../stampers/types.ts'
import { webAuthnStamper } from '../../stampers/webAuthnStamper.ts'
import type { Latchkey } from '../../types.ts'
import { getAccount } from '../proxy/getAccount.ts'
import { loginWithStamper } from './loginWithStamper.ts'
import { withSessionKey } from './withSessionKey.ts'

export type SignInWithPasskeyParameters = {
  /** Limit the prompt to these credential ids (base64url). @default any discoverable passkey */
  allowCredentialIds?: string[] | undefined
  signal?: AbortSignal | undefined
}
export type SignInWithPasskeyReturnType = { session: Session }

/**
 * Passkey login: `stamp_login` for a new non-extractable session key, stamped `X-Stamp-WebAuthn`
 * and addressed to the parent organization (the service finds the user's sub-organization from
 * the credential; see `loginWithStamper` for services that do not).
 */
export function signInWithPasskey(
  client: Latchkey,
  parameters: SignInWithPasskeyParameters = {},
): Promise<SignInWithPasskeyReturnType> {
  return withSessionKey(client, async (key) => {
    const inner = webAuthnStamper({
      ...client.config.passkey,
      allowCredentialIds: parameters.allowCredentialIds,
    })
    let credentialId: string | undefined
    const stamper: Stamper = {
      async stamp(body) {
        const stamp = await inner.stamp(body)
        credentialId = (JSON.parse(stamp.value) as { credentialId: string }).credentialId
        return stamp
      },
    }
    const session = await loginWithStamper(client, {
      key,
      stamper,
      signal: parameters.signal,
      resolveOrganization: async () =>
        credentialId
          ? (await getAccount(client, { filterType: 'CREDENTIAL_ID', filterValue: credentialId }))
              .organizationId
          : undefined,
    })
    return { session: addSessionFromJwt(client, { session, method: 'passkey' }) }
  })
}
