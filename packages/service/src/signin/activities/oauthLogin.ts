import { namesOAuthIdentity, oauthIdentityOf } from '@latchkey/protocol'
import { CredentialError, NotFoundError } from '../../kernel/base/errors.ts'
import { defineActivity } from '../../kernel/registry.ts'
import { oidcNonce } from '../oauth/oidcNonce.ts'
import { signInState } from '../signInState.ts'
import { issueLoginSession, parseLogin } from './issueLoginSession.ts'

/**
 * OAuth login: the service's OIDC token (from `oauth2_authenticate`) whose nonce is the hash of
 * `publicKey` yields a read-write session for that key, once per token.
 */
export const oauthLogin = defineActivity('oauth_login', {
  allowNonRoot: true,
  allowParentOrganization: true,
  skipConsensus: true,
  // The token it redeems is no reader's to take from its record, failed or waiting (`bearerParameters`).
  bearerParameters: ['oidcToken'],
  parse: (r) => parseLogin(r, (r) => ({ oidcToken: r.string('oidcToken', { max: 8192 }) })),
  run: async (ctx, p) => {
    const claims = signInState(ctx.runtime).oidc.verify(p.oidcToken, ctx.organization, 'parameters.oidcToken')
    if (claims.nonce !== oidcNonce(p.publicKey))
      throw new CredentialError({
        code: 'NONCE_MISMATCH',
        field: 'parameters.publicKey',
        message: "the token's nonce is not the SHA-256 of publicKey: it was issued for another key",
      })
    // The provider's issuer and subject, as an import or a link recorded them.
    const identity = oauthIdentityOf(claims)!
    const link = (await ctx.tx.findBy('oauthProviders', 'subject', claims.sub)).find(
      (row) => row.organizationId === ctx.organization.id && namesOAuthIdentity(row, identity),
    )
    const user = link ? await ctx.tx.get('users', link.userId) : undefined
    if (!user)
      throw new NotFoundError({
        code: 'ACCOUNT_NOT_FOUND',
        field: 'parameters.oidcToken',
        message: `no user of organization ${ctx.organization.id} is linked to this OAuth account; sign up first`,
      })
    return issueLoginSession(ctx, {
      user,
      parameters: p,
      // The code or token is spent here: no stored credential of the user opened the session.
      origin: {},
      spend: {
        kind: 'oidc-token',
        id: claims.jti,
        error: {
          errorCode: 'OIDC_TOKEN_REPLAYED',
          message: 'this OIDC token was already used to log in',
          field: 'parameters.oidcToken',
        },
      },
      credential: { type: 'CREDENTIAL_TYPE_OAUTH_KEY_P256', label: 'OAuth' },
    })
  },
})
