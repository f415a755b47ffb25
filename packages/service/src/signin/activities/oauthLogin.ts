import { issueSession, MAX_SESSION_SECONDS, normalizeSessionPublicKey } from '../../domain/sessions.ts'
import { ApiError } from '../../errors.ts'
import { defineActivity } from '../../registry.ts'
import { oidcNonce } from '../oauth/oidcNonce.ts'
import { signInState } from '../signInState.ts'
import { spendOnce } from '../spendOnce.ts'

/**
 * OAuth login: the service's OIDC token (from `oauth2_authenticate`) whose nonce is the hash of
 * `publicKey` yields a read-write session for that key, once per token.
 */
export const oauthLogin = defineActivity('oauth_login', {
  allowNonRoot: true,
  allowParentOrganization: true,
  skipConsensus: true,
  parse: (r) => {
    const expirationSeconds = r.optUintString('expirationSeconds', { max: MAX_SESSION_SECONDS })
    const invalidateExisting = r.optBool('invalidateExisting')
    return {
      oidcToken: r.string('oidcToken', { max: 8192 }),
      publicKey: normalizeSessionPublicKey(r.string('publicKey', { max: 200 }), r.field('publicKey')),
      ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
      ...(invalidateExisting !== undefined ? { invalidateExisting } : {}),
    }
  },
  run: async (ctx, p) => {
    const claims = signInState(ctx.service).oidc.verify(p.oidcToken, 'parameters.oidcToken')
    if (claims.nonce !== oidcNonce(p.publicKey))
      throw new ApiError(
        'NONCE_MISMATCH',
        "the token's nonce is not the SHA-256 of publicKey: it was issued for another key",
        'parameters.publicKey',
      )
    const link = (await ctx.tx.findBy('oauthProviders', 'subject', claims.sub)).find(
      (row) => row.organizationId === ctx.organization.id && row.issuer === claims.iss,
    )
    const user = link ? await ctx.tx.get('users', link.userId) : undefined
    if (!user)
      throw new ApiError(
        'ACCOUNT_NOT_FOUND',
        `no user of organization ${ctx.organization.id} is linked to this OAuth account; sign up first`,
        'parameters.oidcToken',
      )
    await spendOnce(ctx, 'oidc-token', claims.jti, {
      errorCode: 'OIDC_TOKEN_REPLAYED',
      message: 'this OIDC token was already used to log in',
      field: 'parameters.oidcToken',
    })
    const { session } = await issueSession(ctx, {
      user,
      publicKey: p.publicKey,
      expirationSeconds: p.expirationSeconds,
      invalidateExisting: p.invalidateExisting,
      credentialType: 'CREDENTIAL_TYPE_OAUTH_KEY_P256',
      apiKeyName: `OAuth session ${new Date(ctx.now).toISOString()}`,
    })
    return { session }
  },
})
