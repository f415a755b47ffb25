export const CLIENT_SIGNATURE_SCHEME = 'CLIENT_SIGNATURE_SCHEME_API_P256'

/**
 * The published clients' proof of possession on login and sign-up: `signature` (ECDSA-P256-SHA256,
 * raw r‖s or DER hex) over the UTF-8 `message` by `publicKey`, the key bound at `otp_verify`.
 * `message` is JSON naming what the key consents to: `clientSignatureMessage` builds it.
 */
export interface ClientSignature {
  message: string
  publicKey: string
  scheme: typeof CLIENT_SIGNATURE_SCHEME
  signature: string
}

/** The usage a `ClientSignature` message grants: a session for one key, or one sign-up. */
export type ClientSignatureUsage =
  | { type: 'USAGE_TYPE_LOGIN'; tokenId: string; login: { publicKey: string } }
  | {
      type: 'USAGE_TYPE_SIGNUP'
      tokenId: string
      signupV2: {
        apiKeys?: unknown[]
        authenticators?: unknown[]
        oauthProviders?: unknown[]
        email?: string
        phoneNumber?: string
      }
    }

/** The message text in the published clients' key order (`login`/`signupV2`, `tokenId`, `type`). */
export function clientSignatureMessage(usage: ClientSignatureUsage): string {
  return usage.type === 'USAGE_TYPE_LOGIN'
    ? JSON.stringify({
        login: { publicKey: usage.login.publicKey },
        tokenId: usage.tokenId,
        type: usage.type,
      })
    : JSON.stringify({ signupV2: usage.signupV2, tokenId: usage.tokenId, type: usage.type })
}
