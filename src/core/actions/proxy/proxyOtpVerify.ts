import type { ProxyRequest, ProxyResponse } from '@latchkey/protocol'
import { proxy } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'

export type ProxyOtpVerifyParameters = ProxyRequest<'otp_verify'>
export type ProxyOtpVerifyReturnType = ProxyResponse<'otp_verify'>

/** Auth proxy \`/v1/otp_verify\`: checks the code and binds the verification token to \`public_key\`. */
export function proxyOtpVerify(
  client: Latchkey,
  parameters: ProxyOtpVerifyParameters,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<ProxyOtpVerifyReturnType> {
  return proxy(client, 'otp_verify', parameters, options)
}
