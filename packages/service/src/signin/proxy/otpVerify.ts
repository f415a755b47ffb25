import type { ProxyResponse } from '@latchkey/protocol'
import type { Reader } from '../../kernel/Reader.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** `POST /v1/otp_verify`: checks a code and returns a verification token (`verify_otp`). */
export async function otpVerify(call: ProxyCall, r: Reader): Promise<ProxyResponse<'otp_verify'>> {
  if (!call.settings.enabledProviders.some((m) => m === 'email' || m === 'sms'))
    call.requireMethod(undefined, 'OTP')
  const publicKey = r.optString('publicKey', { max: 200 })
  const { verificationToken } = await call.submit('verify_otp', {
    otpId: r.string('otpId', { max: 200 }),
    otpCode: r.string('otpCode', { max: 20 }),
    ...(publicKey !== undefined ? { publicKey } : {}),
  })
  return { verificationToken }
}
