import { OAUTH2_PROVIDERS } from '@latchkey/protocol'
import { defineActivity } from '../../kernel/registry.ts'
import { exchangeAuthorizationCode } from '../oauth/exchangeAuthorizationCode.ts'
import { CODE_VERIFIER } from '../oauth/pkce.ts'
import { methodOf } from '../oauth/providerEndpoints.ts'
import { proxyConfigFor } from '../proxyConfigFor.ts'
import { signInState } from '../signInState.ts'
import { inParameters } from './initOtp.ts'

/**
 * Exchanges an OAuth authorization code (PKCE) at the provider, verifies its ID token and nonce,
 * and returns the service's own OIDC token for `oauth_login` and sign-up.
 */
export const oauth2Authenticate = defineActivity('oauth2_authenticate', {
  allowNonRoot: true,
  skipConsensus: true,
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
      const { oidcToken } = await exchangeAuthorizationCode(p, {
        fetch: state.oauth.fetch,
        endpointsFor: () => state.oauth.resolve(methodOf(p.provider), settings),
        documents: state.oauth.documents,
        serviceOidc: state.oidc,
        now: () => ctx.runtime.now(),
        ...(state.options.oauth?.timeoutMs !== undefined ? { timeoutMs: state.options.oauth.timeoutMs } : {}),
      })
      return { oidcToken }
    }),
  run: (ctx) => ctx.prepared as { oidcToken: string },
})
