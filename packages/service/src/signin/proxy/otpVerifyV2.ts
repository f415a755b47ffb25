import type { ProxyResponse } from '@latchkey/protocol'
import type { Reader } from '../../kernel/Reader.ts'
import { dropOtpEncryptionTarget, openEncryptedOtp } from '../otp/otpEncryptionTarget.ts'
import type { ProxyCall } from './ProxyCall.ts'

/**
 * `POST /v1/otp_verify_v2`: the code and the key to bind arrive HPKE-encrypted to the
 * `otp_init_v2` target (`encryptedOtpBundle`); opened here, then checked by `verify_otp` exactly
 * like `otp_verify` (attempt budget, single use), which returns a token bound to that key.
 */
export async function otpVerifyV2(call: ProxyCall, r: Reader): Promise<ProxyResponse<'otp_verify_v2'>> {
  if (!call.settings.enabledProviders.some((m) => m === 'email' || m === 'sms'))
    call.requireMethod(undefined, 'OTP')
  const otpId = r.string('otpId', { max: 200 })
  const encryptedOtpBundle = r.string('encryptedOtpBundle', { max: 4096 })
  const { otpCode, publicKey } = await openEncryptedOtp(
    call.runtime,
    call.organizationId,
    otpId,
    encryptedOtpBundle,
  )
  const { verificationToken } = await call.submit('verify_otp', { otpId, otpCode, publicKey })
  await dropOtpEncryptionTarget(call.runtime, otpId)
  return { verificationToken }
}
