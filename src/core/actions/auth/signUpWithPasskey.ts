import type { AuthenticatorTransport } from '../../../protocol/index.ts'
import type { Latchkey } from '../../createLatchkey.ts'
import { addSessionFromKey } from '../../session/sessions.ts'
import type { Session } from '../../session/types.ts'
import { webAuthnError } from '../../stampers/webAuthnStamper.ts'
import { randomBytes, toBase64Url } from '../../utils/encoding.ts'
import { proxySignup } from '../proxy/proxySignup.ts'
import { sessionLifetimeSeconds } from './loadWalletKitConfig.ts'
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

const TRANSPORTS: Record<string, AuthenticatorTransport> = {
  ble: 'AUTHENTICATOR_TRANSPORT_BLE',
  internal: 'AUTHENTICATOR_TRANSPORT_INTERNAL',
  nfc: 'AUTHENTICATOR_TRANSPORT_NFC',
  usb: 'AUTHENTICATOR_TRANSPORT_USB',
  hybrid: 'AUTHENTICATOR_TRANSPORT_HYBRID',
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
    const { startRegistration } = await import('@simplewebauthn/browser')
    const options = client.config.passkey ?? {}
    const challenge = toBase64Url(randomBytes(32))
    let registration: Awaited<ReturnType<typeof startRegistration>>
    try {
      registration = await startRegistration({
        optionsJSON: {
          challenge,
          rp: { name: options.rpName ?? 'Latchkey', ...(options.rpId ? { id: options.rpId } : {}) },
          user: {
            id: toBase64Url(randomBytes(16)),
            name: parameters.userEmail ?? parameters.userName,
            displayName: parameters.userName,
          },
          pubKeyCredParams: [
            { type: 'public-key', alg: -7 },
            { type: 'public-key', alg: -257 },
          ],
          timeout: options.timeout ?? 60_000,
          attestation: 'none',
          authenticatorSelection: {
            residentKey: 'required',
            requireResidentKey: true,
            userVerification: options.userVerification ?? 'preferred',
          },
        },
      })
    } catch (error) {
      throw webAuthnError(error)
    }
    const lifetimeSeconds = await sessionLifetimeSeconds(client)
    const { organizationId, userId } = await proxySignup(
      client,
      {
        userName: parameters.userName,
        ...(parameters.userEmail ? { userEmail: parameters.userEmail } : {}),
        authenticators: [
          {
            authenticatorName: parameters.authenticatorName ?? `${parameters.userName}'s passkey`,
            challenge,
            attestation: {
              credentialId: registration.id,
              clientDataJson: registration.response.clientDataJSON,
              attestationObject: registration.response.attestationObject,
              transports: (registration.response.transports ?? []).flatMap((t) =>
                TRANSPORTS[t] ? [TRANSPORTS[t]] : [],
              ),
            },
          },
        ],
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
    return { session, organizationId, userId, credentialId: registration.id }
  })
}
