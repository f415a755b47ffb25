import type { AuthenticatorParams, AuthenticatorTransport } from '@latchkey/protocol'
import { webAuthnError } from '../../stampers/webAuthnStamper.ts'
import type { Latchkey } from '../../types.ts'
import { randomBytes, toBase64Url } from '../../utils/encoding.ts'

const TRANSPORTS: Record<string, AuthenticatorTransport> = {
  ble: 'AUTHENTICATOR_TRANSPORT_BLE',
  internal: 'AUTHENTICATOR_TRANSPORT_INTERNAL',
  nfc: 'AUTHENTICATOR_TRANSPORT_NFC',
  usb: 'AUTHENTICATOR_TRANSPORT_USB',
  hybrid: 'AUTHENTICATOR_TRANSPORT_HYBRID',
}

/**
 * Creates a passkey with the platform (`navigator.credentials.create` through
 * @simplewebauthn/browser, loaded on use) and returns it as `authenticators[]` parameters.
 */
export async function registerPasskey(
  client: Latchkey,
  parameters: { userName: string; displayName?: string | undefined; authenticatorName: string },
): Promise<AuthenticatorParams> {
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
          name: parameters.userName,
          displayName: parameters.displayName ?? parameters.userName,
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
  return {
    authenticatorName: parameters.authenticatorName,
    challenge,
    attestation: {
      credentialId: registration.id,
      clientDataJson: registration.response.clientDataJSON,
      attestationObject: registration.response.attestationObject,
      transports: (registration.response.transports ?? []).flatMap((t) =>
        TRANSPORTS[t] ? [TRANSPORTS[t]] : [],
      ),
    },
  }
}
