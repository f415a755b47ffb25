import type { ProxyRequest, ProxyResponse } from '@latchkey/protocol'
import { proxy } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'

export type ProxyOtpInitParameters = ProxyRequest<'otp_init'>
export type ProxyOtpInitReturnType = ProxyResponse<'otp_init'>

/** Auth proxy \`/v1/otp_init\`: sends a one-time code by e-mail or SMS. */
export function proxyOtpInit(
  client: Latchkey,
  parameters: ProxyOtpInitParameters,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<ProxyOtpInitReturnType> {
  return proxy(client, 'otp_init', parameters, options)
}
