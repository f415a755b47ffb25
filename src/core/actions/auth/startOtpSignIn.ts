import { CAPTCHA_TOKEN_HEADER, type OtpType } from '@latchkey/protocol'
import { type PendingOtp, rememberPendingOtp } from '../../session/createPendingOtpStore.ts'
import { proxy } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'

export type StartOtpSignInParameters = {
  /** `OTP_TYPE_EMAIL` or `OTP_TYPE_SMS`. */
  otpType: OtpType
  /** E-mail address, or phone number in E.164 (`+15551234567`). */
  contact: string
  /**
   * The token of a solved CAPTCHA, when the proxy configuration enables one
   * (`wallet_kit_config`'s `captcha`): a code sent with a passing token is not held back by the
   * address's send budget.
   */
  captchaToken?: string | undefined
  signal?: AbortSignal | undefined
}
/** The code now pending on this client (`client.pendingOtps`). */
export type StartOtpSignInReturnType = PendingOtp

/**
 * Step 1 of e-mail/SMS sign-in: sends the code (`otp_init_v2`, which also returns the signed
 * target the code will be encrypted to). Pass the result to `completeOtpSignIn`.
 */
export async function startOtpSignIn(
  client: Latchkey,
  { otpType, contact, captchaToken, signal }: StartOtpSignInParameters,
): Promise<StartOtpSignInReturnType> {
  const trimmed = contact.trim()
  const { otpId, otpEncryptionTargetBundle } = await proxy(
    client,
    'otp_init_v2',
    { otpType, contact: trimmed },
    { signal, ...(captchaToken ? { headers: { [CAPTCHA_TOKEN_HEADER]: captchaToken } } : {}) },
  )
  const pending: PendingOtp = { otpId, otpType, contact: trimmed, otpEncryptionTargetBundle }
  rememberPendingOtp(client.pendingOtps, pending)
  return pending
}
