import { topLevelOf } from '../../domain/organizations.ts'
import { CredentialError } from '../../kernel/base/errors.ts'
import { CryptoInputError, signJwt, verifyJwt } from '../../kernel/crypto/index.ts'

/** Claims of the OIDC token the service issues after an OAuth exchange. */
export interface ServiceOidcClaims {
  iss: string
  /** The provider's subject for the person. */
  sub: string
  /** The OAuth client id the code was issued to. */
  aud: string
  /** The spec's nonce: hex SHA-256 of the client's compressed public key hex. */
  nonce: string
  jti: string
  iat: number
  exp: number
  /** `OAUTH2_PROVIDER_*` the person signed in with. */
  provider: string
  /** Issuer of the provider's ID token. */
  idp_iss: string
  /**
   * The top-level organization whose auth-proxy settings named the provider (`topLevelOf`
   * the organization `oauth2_authenticate` ran in): the token logs in, signs up and links only
   * there and in its sub-organizations. Each organization configures its own provider, issuer and
   * key set included, so without it a token one organization's provider vouched for would name
   * the same person at another organization of the deployment.
   */
  org: string
  email?: string
  /** Whether the provider said it verified `email` (`emailVerifiedClaim`); absent when it said nothing. */
  email_verified?: boolean
  name?: string
}

/**
 * The provider ID token's `email_verified` as the service token carries it: `true` only for what
 * OpenID Connect means by it, boolean `true`, or the string `"true"`, which Apple documents as a
 * form of the claim ("a string or a Boolean"); `false` for anything else the provider said,
 * `"false"` included; absent when it said nothing (Facebook's Limited Login tokens, many custom
 * issuers). Any other string is read as not verified rather than guessed at.
 */
export function emailVerifiedClaim(value: unknown): boolean | undefined {
  if (value === undefined) return undefined
  return value === true || value === 'true'
}

/**
 * True when a service token proves its e-mail: the provider said it verified it. A token without
 * `email_verified` proves nothing about the address: an issuer that does not say may hand out
 * tokens naming any address its user typed (the "nOAuth" class), and taking them as proof would let
 * such a user's sign-up route another person's e-mail logins into their account.
 */
export const tokenProvesEmail = (claims: { email?: unknown; email_verified?: unknown }): boolean =>
  typeof claims.email === 'string' && claims.email !== '' && claims.email_verified === true

export interface ServiceOidcOptions {
  /** Opens the service's P-256 sign-in key (32 bytes) for one signature; it is wiped after. */
  privateKey: () => Uint8Array
  /** Its public key (33 or 65 bytes). */
  publicKey: Uint8Array
  /** `iss` of the tokens. */
  issuer: string
  /** Epoch milliseconds. @default Date.now */
  now?: () => number
  /** Token lifetime. @default 600 */
  lifetimeSeconds?: number
}

/** `iss` of the OIDC tokens the service issues (`oauth2_authenticate`), from @latchkey/protocol (oauthIdentity.ts). */
export { SERVICE_OIDC_ISSUER } from '@latchkey/protocol'

/** `kid` of the sign-in key in JWT headers. */
export const SIGN_IN_KEY_ID = 'sign-in'

export type ServiceOidc = ReturnType<typeof createServiceOidc>

/**
 * The service's own OIDC tokens (ES256): `oauth2_authenticate` issues them after verifying the
 * provider's ID token; `oauth_login`, `account` and sign-up accept only these.
 */
export function createServiceOidc(options: ServiceOidcOptions) {
  const now = options.now ?? Date.now
  const lifetime = options.lifetimeSeconds ?? 600

  function issue(claims: Omit<ServiceOidcClaims, 'iss' | 'iat' | 'exp' | 'jti'> & { jti?: string }): {
    token: string
    claims: ServiceOidcClaims
  } {
    const iat = Math.floor(now() / 1000)
    const full: ServiceOidcClaims = {
      ...claims,
      iss: options.issuer,
      iat,
      exp: iat + lifetime,
      jti: claims.jti ?? crypto.randomUUID(),
    }
    const key = options.privateKey()
    try {
      return { token: signJwt(full, key, SIGN_IN_KEY_ID), claims: full }
    } finally {
      key.fill(0)
    }
  }

  /**
   * Verifies signature, issuer, expiry, the claims `oauth_login` needs, and that it was issued in
   * `organization`'s tree (its `org` claim: `topLevelOf`); `OIDC_TOKEN_INVALID` otherwise.
   */
  function verify(
    token: unknown,
    organization: { id: string; parentOrganizationId?: string | undefined },
    field = 'oidcToken',
  ): ServiceOidcClaims {
    if (typeof token !== 'string' || token.split('.').length !== 3)
      throw new CredentialError({ code: 'OIDC_TOKEN_INVALID', field, reason: 'is not a JWT' })
    let claims: Partial<ServiceOidcClaims>
    try {
      claims = verifyJwt<Partial<ServiceOidcClaims>>(token, options.publicKey, Math.floor(now() / 1000))
    } catch (error) {
      if (!(error instanceof CryptoInputError)) throw error
      const reason = /expired/.test(error.message) ? 'has expired' : `is not valid (${error.message})`
      throw new CredentialError({ code: 'OIDC_TOKEN_INVALID', field, reason })
    }
    if (claims.iss !== options.issuer)
      throw new CredentialError({
        code: 'OIDC_TOKEN_INVALID',
        field,
        reason: 'was not issued by this service',
      })
    for (const name of ['sub', 'aud', 'nonce', 'jti', 'provider'] as const)
      if (typeof claims[name] !== 'string' || claims[name] === '')
        throw new CredentialError({ code: 'OIDC_TOKEN_INVALID', field, reason: `lacks the ${name} claim` })
    if (typeof claims.exp !== 'number')
      throw new CredentialError({ code: 'OIDC_TOKEN_INVALID', field, reason: 'lacks the exp claim' })
    if (typeof claims.org !== 'string')
      throw new CredentialError({
        code: 'OIDC_TOKEN_INVALID',
        field,
        reason: 'names no organization (issued before tokens named one): sign in with the provider again',
      })
    if (claims.org !== topLevelOf(organization))
      throw new CredentialError({
        code: 'OIDC_TOKEN_INVALID',
        field,
        reason: `was issued for another organization's sign-in, not organization ${organization.id}'s`,
      })
    return claims as ServiceOidcClaims
  }

  return { issue, verify, issuer: options.issuer }
}
