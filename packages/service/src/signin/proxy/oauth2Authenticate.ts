import { OAUTH2_PROVIDERS, type ProxyResponse } from '@latchkey/protocol'
import type { Reader } from '../../kernel/Reader.ts'
import { methodOf } from '../oauth/providerEndpoints.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** `POST /v1/oauth2_authenticate`: exchanges an OAuth authorization code for an OIDC token (`oauth2_authenticate`). */
export async function oauth2Authenticate(
  call: ProxyCall,
  r: Reader,
): Promise<ProxyResponse<'oauth2_authenticate'>> {
  const provider = r.enum('provider', OAUTH2_PROVIDERS)
  call.requireMethod(methodOf(provider), `sign-in with ${methodOf(provider)}`)
  const { oidcToken } = await call.submit('oauth2_authenticate', {
    provider,
    authCode: r.string('authCode', { max: 4096 }),
    redirectUri: r.string('redirectUri', { max: 2048 }),
    codeVerifier: r.string('codeVerifier', { max: 128 }),
    nonce: r.string('nonce', { max: 128 }),
    clientId: r.string('clientId', { max: 512 }),
  })
  return { oidcToken }
}
