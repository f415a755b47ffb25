import { OAUTH2_PROVIDERS } from '@latchkey/protocol'
import { topLevelOf } from '../../domain/organizations.ts'
import { proxyConfigFor } from '../../domain/proxyConfigFor.ts'
import { CredentialError } from '../../kernel/base/errors.ts'
import { defineActivity } from '../../kernel/registry.ts'
import { devClientId } from '../defaultProxySettings.ts'
import { exchangeAuthorizationCode } from '../oauth/exchangeAuthorizationCode.ts'
import { CODE_VERIFIER } from '../oauth/pkce.ts'
import { methodOf } from '../oauth/providerEndpoints.ts'
import { signInState } from '../signInState.ts'
import { inParameters } from './initOtp.ts'

/**
 * Exchanges an OAuth authorization code (PKCE) at the provider, verifies its ID token and nonce,
 * and returns the service's own OIDC token for `oauth_login` and sign-up.
 * The token is answered to the request that exchanged the code and never stored (`shownOnce`): a
 * first-time user's token signs up (and proves its e-mail), so a reader of the organization who took
 * it from `get_activity` could sign up first and catch the person's logins in an account of its own.
 * The code was spent at the provider: a replay of the request shows it emptied (sign in again).
 * Nor are the code and its PKCE verifier kept (`bearerParameters`): an exchange that failed before
 * the provider spent the code (discovery or the token endpoint unreachable) left them live in a
 * FAILED record, and whoever read it exchanged them for the person's token.
 */
export const oauth2Authenticate = defineActivity('oauth2_authenticate', {
  allowNonRoot: true,
  skipConsensus: true,
  shownOnce: ['oidcToken'],
  bearerParameters: ['authCode', 'codeVerifier'],
  parse: (r) => ({
    provider: r.enum('provider', OAUTH2_PROVIDERS),
    authCode: r.string('authCode', { max: 4096 }),
    redirectUri: r.string('redirectUri', { max: 2048 }),
    codeVerifier: r.string('codeVerifier', {
      max: 128,
      pattern: CODE_VERIFIER,
      hint: 'a PKCE code verifier (43 to 128 unreserved characters)',
    }),
    nonce: r.string('nonce', {
      pattern: /^[0-9a-f]{64}$/,
      hint: 'the lowercase hex SHA-256 of the public key hex',
    }),
    clientId: r.string('clientId', { max: 512 }),
  }),
  // The code exchange and JWKS fetch (each with a timeout) hold no database transaction: a slow
  // provider delays only this request.
  prepare: (ctx, p) =>
    inParameters(async () => {
      const state = signInState(ctx.runtime)
      const settings = (await proxyConfigFor(ctx.runtime.store, ctx.organization.id))?.settings
      const method = methodOf(p.provider)
      // The organization's own provider is a public client: no secret proves whose code this is.
      // A code the person gave another app's client id (their subject is the same there) would
      // otherwise log the other app in to their account here, so once the settings name this
      // app's client id, only it counts. The kit starts every sign-in with that client id (from
      // wallet_kit_config), so a provider configured with the new configuration's placeholder
      // (`latchkey-dev-*`) signs nobody in at a real provider: refused too, naming the setting.
      // Settings naming the provider but no client id for it (written by hand, or by an older
      // version) bind nothing either: refused, never any client id accepted.
      if (settings?.oauth.providers?.[method]) {
        const ownClientId = settings.oauth.clientIds[method]
        const unchecked = !ownClientId || ownClientId === devClientId(method)
        if (unchecked || p.clientId !== ownClientId)
          throw new CredentialError({
            code: 'OAUTH_EXCHANGE_FAILED',
            field: 'clientId',
            reason: unchecked
              ? `cannot be checked: set this app's client id for ${method} in its auth-proxy settings (oauth.clientIds.${method}, ${ownClientId ? `still the placeholder ${ownClientId}` : 'not set'})`
              : `is not this app's client id for ${method} (oauth.clientIds.${method} of its auth-proxy settings)`,
          })
      }
      const { oidcToken } = await exchangeAuthorizationCode(p, {
        fetch: state.oauth.fetch,
        endpointsFor: () => state.oauth.resolve(method, settings),
        documents: state.oauth.documents,
        serviceOidc: state.oidc,
        organizationId: topLevelOf(ctx.organization),
        now: () => ctx.runtime.now(),
        ...(state.options.oauth?.timeoutMs !== undefined ? { timeoutMs: state.options.oauth.timeoutMs } : {}),
      })
      return { oidcToken }
    }),
  run: (ctx) => ctx.prepared as { oidcToken: string },
})
