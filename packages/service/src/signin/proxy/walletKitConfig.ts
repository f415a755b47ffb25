import { OAUTH_METHODS, type ProxyResponse } from '@latchkey/protocol'
import { DEV_OIDC_PREFIX } from '../oauth/devIdp.ts'
import { sessionDefaultOf } from '../proxyConfig.ts'
import { signInState } from '../signInState.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** `POST /v1/wallet_kit_config`: the sign-in methods and OAuth settings a kit renders. */
export async function walletKitConfig(call: ProxyCall): Promise<ProxyResponse<'wallet_kit_config'>> {
  const enabled = call.settings.enabledProviders
  const state = signInState(call.runtime)
  const { captcha } = state.options
  const origin = new URL(call.c.req.url).origin
  const providers = state.oauth
  // A method whose provider cannot be resolved (none configured, discovery down) gets no endpoint.
  const resolved = await Promise.all(
    OAUTH_METHODS.filter((method) => enabled.includes(method)).map(async (method) => {
      try {
        return [method, await providers.resolve(method, call.settings)] as const
      } catch {
        return undefined
      }
    }),
  )
  const oauth = resolved.filter((entry) => entry !== undefined)
  // The operator's client id wins over the settings' unless the organization names its own provider.
  const clientIdOf = (method: (typeof OAUTH_METHODS)[number]) =>
    (!call.settings.oauth.providers?.[method] && providers.clientIds[method]) ||
    call.settings.oauth.clientIds[method]
  return {
    enabledProviders: [...enabled],
    // What the kit asks for at login and sign-up: never past the ceiling, which a sign-up's key refuses.
    sessionExpirationSeconds: sessionDefaultOf(call.settings),
    organizationId: call.organizationId,
    oauthClientIds: Object.fromEntries(
      oauth.filter(([m]) => clientIdOf(m)).map(([m]) => [m, clientIdOf(m)!]),
    ),
    oauthRedirectUrl: call.settings.oauth.redirectUrl,
    oauthAuthorizationEndpoints: Object.fromEntries(
      oauth.flatMap(([m, provider]) => {
        const endpoint = provider.dev
          ? `${origin}${DEV_OIDC_PREFIX}/${m}/authorize`
          : provider.authorizationEndpoint
        return endpoint ? [[m, endpoint]] : []
      }),
    ),
    // A development service's OTP messages go to its outbox, which production does not serve.
    ...(call.runtime.options.mode === 'production' ? {} : { devOutboxUrl: `${origin}/dev/outbox` }),
    ...(captcha ? { captcha: { provider: captcha.provider, siteKey: captcha.siteKey } } : {}),
    // The published fields: a kit renders the code step for the codes the service actually sends.
    otpLength: String(call.settings.otpLength ?? 6),
    otpAlphanumeric: call.settings.otpAlphabet === 'alphanumeric',
  }
}
