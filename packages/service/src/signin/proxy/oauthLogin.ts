import { OAUTH2_PROVIDERS, type ProxyResponse } from '@latchkey/protocol'
import { CredentialError } from '../../kernel/base/errors.ts'
import type { Reader } from '../../kernel/Reader.ts'
import { methodOf } from '../oauth/providerEndpoints.ts'
import { claimsOf } from './claimsOf.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** `POST /v1/oauth_login`: exchanges an OIDC token for a session in its sub-organization (`oauth_login`). */
export async function oauthLogin(call: ProxyCall, r: Reader): Promise<ProxyResponse<'oauth_login'>> {
  const oidcToken = r.string('oidcToken', { max: 8192 })
  const provider = claimsOf(oidcToken).provider
  const method = OAUTH2_PROVIDERS.includes(provider as never) ? methodOf(provider as never) : undefined
  if (!method)
    throw new CredentialError({
      code: 'OIDC_TOKEN_INVALID',
      field: 'oidcToken',
      reason: 'is not a token from oauth2_authenticate',
    })
  call.requireMethod(method, `sign-in with ${method}`)
  const organizationId = await call.targetOrganization(r, 'OIDC_TOKEN', oidcToken, 'OAuth account')
  const invalidateExisting = r.optBool('invalidateExisting')
  const sessionProfileId = r.optString('sessionProfileId', { max: 200 })
  const { session } = await call.submit(
    'oauth_login',
    {
      oidcToken,
      publicKey: r.string('publicKey', { max: 200 }),
      expirationSeconds: call.sessionSeconds(r),
      ...(invalidateExisting !== undefined ? { invalidateExisting } : {}),
      ...(sessionProfileId !== undefined ? { sessionProfileId } : {}),
    },
    organizationId,
  )
  return { session }
}
