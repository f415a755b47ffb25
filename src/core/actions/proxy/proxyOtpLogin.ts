import type { ProxyRequest, ProxyResponse } from '@latchkey/protocol'
import { proxy } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'

export type ProxyOtpLoginParameters = ProxyRequest<'otp_login'>
export type ProxyOtpLoginReturnType = ProxyResponse<'otp_login'>

/** Auth proxy \`/v1/otp_login\`: exchanges a verification token (+ client signature) for a session. */
export function proxyOtpLogin(
  client: Latchkey,
  parameters: ProxyOtpLoginParameters,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<ProxyOtpLoginReturnType> {
  return proxy(client, 'otp_login', parameters, options)
}
