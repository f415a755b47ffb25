import { OAUTH_METHODS, type ProxyResponse } from '@latchkey/protocol'
import { DEV_OIDC_PREFIX } from '../oauth/devIdp.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** `POST /v1/wallet_kit_config`: the sign-in methods and OAuth settings a kit renders. */
export function walletKitConfig(call: ProxyCall): ProxyResponse<'wallet_kit_config'> {
  const enabled = call.settings.enabledProviders
  const origin = new URL(call.c.req.url).origin
  const oauth = OAUTH_METHODS.filter((method) => enabled.includes(method))
  return {
    enabledProviders: [...enabled],
    sessionExpirationSeconds: call.settings.sessionExpirationSeconds,
    organizationId: call.organizationId,
    oauthClientIds: Object.fromEntries(
      oauth
        .filter((m) => call.settings.oauth.clientIds[m])
        .map((m) => [m, call.settings.oauth.clientIds[m]!]),
    ),
    oauthRedirectUrl: call.settings.oauth.redirectUrl,
    oauthAuthorizationEndpoints: Object.fromEntries(
      oauth.map((m) => [
        m,
        call.settings.oauth.providers?.[m]?.authorizationEndpoint ??
          `${origin}${DEV_OIDC_PREFIX}/${m}/authorize`,
      ]),
    ),
    // The local service is a development service: OTP messages go to its outbox, never out.
    devOutboxUrl: `${origin}/dev/outbox`,
  }
}
