import type { ProxyRequest, ProxyResponse } from '@latchkey/protocol'
import { proxy } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'

export type ProxyOAuth2AuthenticateParameters = ProxyRequest<'oauth2_authenticate'>
export type ProxyOAuth2AuthenticateReturnType = ProxyResponse<'oauth2_authenticate'>

/** Auth proxy \`/v1/oauth2_authenticate\`: exchanges an authorization code (PKCE) for the service’s OIDC token. */
export function proxyOAuth2Authenticate(
  client: Latchkey,
  parameters: ProxyOAuth2AuthenticateParameters,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<ProxyOAuth2AuthenticateReturnType> {
  return proxy(client, 'oauth2_authenticate', parameters, options)
}
