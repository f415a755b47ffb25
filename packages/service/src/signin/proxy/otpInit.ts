import { OTP_TYPES, type ProxyResponse } from '@latchkey/protocol'
import type { Reader } from '../../pipeline/Reader.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** `POST /v1/otp_init`: sends a one-time code to an e-mail address or phone number (`init_otp`). */
export async function otpInit(call: ProxyCall, r: Reader): Promise<ProxyResponse<'otp_init'>> {
  const otpType = r.enum('otpType', OTP_TYPES)
  call.requireMethod(
    otpType === 'OTP_TYPE_EMAIL' ? 'email' : 'sms',
    otpType === 'OTP_TYPE_EMAIL' ? 'e-mail OTP' : 'SMS OTP',
  )
  const { otpId } = await call.submit('init_otp', { otpType, contact: r.string('contact', { max: 320 }) })
  return { otpId }
}
