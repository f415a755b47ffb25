import type { ProxyResponse } from '@latchkey/protocol'
import type { Reader } from '../../kernel/Reader.ts'
import { createOtpEncryptionTarget } from '../otp/otpEncryptionTarget.ts'
import { otpInit } from './otpInit.ts'
import type { ProxyCall } from './ProxyCall.ts'

/**
 * `POST /v1/otp_init_v2`: `otp_init`, plus the signed target key the client encrypts the code to
 * (`otpEncryptionTargetBundle`, checked against the service's signer key, `GET /public/v1/signer`).
 */
export async function otpInitV2(call: ProxyCall, r: Reader): Promise<ProxyResponse<'otp_init_v2'>> {
  const { otpId } = await otpInit(call, r)
  const otpEncryptionTargetBundle = await createOtpEncryptionTarget(call.runtime, call.organizationId, otpId)
  return { otpId, otpEncryptionTargetBundle }
}
