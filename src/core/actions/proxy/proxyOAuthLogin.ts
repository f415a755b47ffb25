import type { ProxyRequest, ProxyResponse } from '@latchkey/protocol'
import { proxy } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'

export type ProxyOAuthLoginParameters = ProxyRequest<'oauth_login'>
export type ProxyOAuthLoginReturnType = ProxyResponse<'oauth_login'>

/** Auth proxy \`/v1/oauth_login\`: exchanges an OIDC token bound to \`publicKey\` for a session. */
export function proxyOAuthLogin(
  client: Latchkey,
  parameters: ProxyOAuthLoginParameters,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<ProxyOAuthLoginReturnType> {
  return proxy(client, 'oauth_login', parameters, options)
}
