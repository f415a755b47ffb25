import type { MessageKey } from '../i18n/en.ts'
import type { Translate } from '../i18n/messages.ts'

// Error codes (LatchkeyError.code, shared with the service) that have a message of their own.
const MESSAGE_OF: Partial<Record<string, MessageKey>> = {
  OTP_INVALID: 'otpInvalid',
  OTP_EXPIRED: 'otpExpired',
  VERIFICATION_TOKEN_INVALID: 'otpExpired',
  OTP_ATTEMPTS_EXCEEDED: 'otpLocked',
  OTP_RATE_LIMITED: 'errorRateLimited',
  RATE_LIMITED: 'errorRateLimited',
  NETWORK_ERROR: 'errorNetwork',
  TIMEOUT: 'errorNetwork',
  NOT_SIGNED_IN: 'errorNotSignedIn',
  SESSION_EXPIRED: 'errorNotSignedIn',
  PUBLIC_KEY_NOT_FOUND: 'errorNotSignedIn',
  API_KEY_EXPIRED: 'errorNotSignedIn',
  PERMISSION_DENIED: 'errorPermission',
  PROXY_DISABLED: 'proxyDisabledBody',
  METHOD_DISABLED: 'noMethodsBody',
  POPUP_BLOCKED: 'oauthBlockedBody',
  CONTACT_INVALID: 'emailInvalid',
  WALLET_UNAVAILABLE: 'walletNoneBody',
  FRAME_LOAD_FAILED: 'frameError',
}

/** The stable code of an error thrown by the client (`LatchkeyError.code`), if any. */
export const errorCodeOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
    ? (error as { code: string }).code
    : undefined

/** A calm, translated sentence for an error; never the raw service message (it may be English or technical). */
export function errorMessage(t: Translate, error: unknown): string {
  const code = errorCodeOf(error)
  const key = code ? MESSAGE_OF[code] : undefined
  return t(key ?? 'errorGeneric')
}
