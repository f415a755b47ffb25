import { OTP_TYPES, type ProxyResponse } from '@latchkey/protocol'
import { clientAddress } from '../../pipeline/originPolicy.ts'
import type { Reader } from '../../pipeline/Reader.ts'
import { signInState } from '../signInState.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** Codes one client address may request through the proxy, whatever the contacts. */
export const OTP_INIT_PER_ADDRESS = { perMinute: 20, perHour: 200 }

/**
 * `POST /v1/otp_init`: sends a one-time code to an e-mail address or phone number (`init_otp`).
 * Besides the per-contact budget of `init_otp`, the caller's address has its own (kept in the
 * store), so one client cannot spray codes across many contacts.
 */
export async function otpInit(call: ProxyCall, r: Reader): Promise<ProxyResponse<'otp_init'>> {
  const otpType = r.enum('otpType', OTP_TYPES)
  call.requireMethod(
    otpType === 'OTP_TYPE_EMAIL' ? 'email' : 'sms',
    otpType === 'OTP_TYPE_EMAIL' ? 'e-mail OTP' : 'SMS OTP',
  )
  const contact = r.string('contact', { max: 320 })
  const address = clientAddress(call.c)
  if (address !== undefined)
    await signInState(call.runtime).otp.charge([
      {
        key: `address:${address}`,
        limit: OTP_INIT_PER_ADDRESS,
        message: 'too many codes requested from this address; try again later',
      },
    ])
  const { otpId } = await call.submit('init_otp', { otpType, contact })
  return { otpId }
}
