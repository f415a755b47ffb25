import { WEBAUTHN_STAMP_HEADER } from '@latchkey/protocol'
import { webAuthnChallengeOf } from '@latchkey/protocol/webAuthnChallengeOf'
import { UserCancelledError, WalletUnavailableError } from '../errors.ts'
import { toBase64Url, utf8ToBytes } from '../utils/encoding.ts'
import type { Stamper } from './types.ts'

export interface WebAuthnStamperParameters {
  /** Relying-party id; the page's host when absent. */
  rpId?: string | undefined
  /** @default 60_000 */
  timeout?: number | undefined
  /** @default 'preferred' */
  userVerification?: 'required' | 'preferred' | 'discouraged' | undefined
  /** Credential ids (base64url) to allow; empty lets the user pick any discoverable passkey. */
  allowCredentialIds?: string[] | undefined
}

/** Maps a WebAuthn failure to our errors: a dismissed prompt is a cancellation, not a crash. */
export function webAuthnError(error: unknown): Error {
  const name = (error as { name?: string; cause?: { name?: string } })?.cause?.name ?? (error as Error)?.name
  if (name === 'NotAllowedError' || name === 'AbortError')
    return new UserCancelledError('The passkey prompt was dismissed', error)
  if (error instanceof Error && /does not support WebAuthn/i.test(error.message))
    return new WalletUnavailableError('This browser does not support passkeys', error)
  return error instanceof Error ? error : new Error(String(error))
}

/**
 * `X-Stamp-WebAuthn`: a passkey assertion whose challenge is the ASCII of the body's hex
 * SHA-256. @simplewebauthn/browser is loaded only when a passkey is actually used.
 */
export function webAuthnStamper(parameters: WebAuthnStamperParameters = {}): Stamper {
  return {
    async stamp(body) {
      const { startAuthentication } = await import('@simplewebauthn/browser')
      const challenge = toBase64Url(utf8ToBytes(webAuthnChallengeOf(body)))
      let response: Awaited<ReturnType<typeof startAuthentication>>
      try {
        response = await startAuthentication({
          optionsJSON: {
            challenge,
            ...(parameters.rpId ? { rpId: parameters.rpId } : {}),
            timeout: parameters.timeout ?? 60_000,
            userVerification: parameters.userVerification ?? 'preferred',
            allowCredentials: (parameters.allowCredentialIds ?? []).map((id) => ({
              id,
              type: 'public-key' as const,
            })),
          },
        })
      } catch (error) {
        throw webAuthnError(error)
      }
      return {
        header: WEBAUTHN_STAMP_HEADER,
        value: JSON.stringify({
          authenticatorData: response.response.authenticatorData,
          clientDataJson: response.response.clientDataJSON,
          credentialId: response.id,
          signature: response.response.signature,
        }),
      }
    },
  }
}
