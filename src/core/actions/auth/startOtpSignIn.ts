import type { OtpType } from '@latchkey/protocol'
import type { Latchkey } from '../../types.ts'
import { proxyOtpInit } from '../proxy/proxyOtpInit.ts'

export type StartOtpSignInParameters = {
  /** `OTP_TYPE_EMAIL` or `OTP_TYPE_SMS`. */
  otpType: OtpType
  /** E-mail address, or phone number in E.164 (`+15551234567`). */
  contact: string
  signal?: AbortSignal | undefined
}
export type StartOtpSignInReturnType = { otpId: string; otpType: OtpType; contact: string }

/** Step 1 of e-mail/SMS sign-in: sends the code. Pass the result to `completeOtpSignIn`. */
export async function startOtpSignIn(
  client: Latchkey,
  { otpType, contact, signal }: StartOtpSignInParameters,
): Promise<StartOtpSignInReturnType> {
  const trimmed = contact.trim()
  const { otpId } = await proxyOtpInit(client, { otpType, contact: trimmed }, { signal })
  return { otpId, otpType, contact: trimmed }
}
