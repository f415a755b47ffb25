import type { ProxyRequest, ProxyResponse } from '@latchkey/protocol'
import { proxy } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'

export type ProxySignupParameters = ProxyRequest<'signup'>
export type ProxySignupReturnType = ProxyResponse<'signup'>

/** Auth proxy \`/v1/signup\`: creates a sub-organization (and its root user) for a new person. */
export function proxySignup(
  client: Latchkey,
  parameters: ProxySignupParameters,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<ProxySignupReturnType> {
  return proxy(client, 'signup', parameters, options)
}
