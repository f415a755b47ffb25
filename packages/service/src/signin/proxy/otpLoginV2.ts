import type { ProxyResponse } from '@latchkey/protocol'
import { FieldError } from '../../kernel/base/errors.ts'
import type { Reader } from '../../kernel/Reader.ts'
import { otpLogin } from './otpLogin.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** `POST /v1/otp_login_v2`: `otp_login` whose `clientSignature` must be the published object. */
export async function otpLoginV2(call: ProxyCall, r: Reader): Promise<ProxyResponse<'otp_login_v2'>> {
  const signature = r.value.clientSignature
  if (typeof signature !== 'object' || signature === null || Array.isArray(signature))
    throw new FieldError({
      code: signature === undefined ? 'FIELD_REQUIRED' : 'FIELD_INVALID',
      field: 'clientSignature',
      reason: 'must be { message, publicKey, scheme, signature }',
    })
  return otpLogin(call, r)
}
