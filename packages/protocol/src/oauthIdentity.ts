/**
 * What identifies one person's OAuth identity, the same on every path that records or compares
 * one (an import's `{ issuer, subject }`, a link or sign-up by the service's OIDC token, the
 * `oidcClaims` a root vouches for, a login, the proxy's account lookup, the kit): the identity
 * provider's issuer and the subject it gave the person. The service's own tokens
 * (`oauth2_authenticate`) are issued by the service (`iss`) and carry the provider's issuer as
 * `idp_iss`: that one names the provider. Issuers are compared in their canonical spelling, so
 * Google's two (`accounts.google.com` and `https://accounts.google.com`, both in its ID tokens)
 * are one provider.
 */
export interface OAuthIdentity {
  /** The identity provider's issuer, canonical (`canonicalIssuer`). */
  issuer: string
  subject: string
}

/** `iss` of the OIDC tokens the service issues (`oauth2_authenticate`): the service, not a provider. */
export const SERVICE_OIDC_ISSUER = 'https://latchkey.invalid/oidc'

/** Other spellings of one issuer (OpenID Connect compares issuers as strings; Google's ID tokens use both). */
const SPELLINGS: Record<string, string> = {
  'accounts.google.com': 'https://accounts.google.com',
  'http://accounts.google.com': 'https://accounts.google.com',
}

/** The spelling an issuer is recorded and compared in. */
export function canonicalIssuer(issuer: string): string {
  const trimmed = issuer.trim()
  return SPELLINGS[trimmed.toLowerCase()] ?? trimmed
}

/**
 * The identity an OIDC token's claims name: `idp_iss` (the provider, in the service's own tokens)
 * or else `iss`, with `sub`. Undefined when they name none.
 */
export function oauthIdentityOf(claims: {
  iss?: unknown
  sub?: unknown
  idp_iss?: unknown
}): OAuthIdentity | undefined {
  const issuer =
    typeof claims.idp_iss === 'string' && claims.idp_iss !== ''
      ? claims.idp_iss
      : typeof claims.iss === 'string'
        ? claims.iss
        : undefined
  if (issuer === undefined || typeof claims.sub !== 'string' || claims.sub === '') return undefined
  return { issuer: canonicalIssuer(issuer), subject: claims.sub }
}

/** The identity as one string (`issuer\nsubject`, canonical): the value of its claim and of comparisons. */
export const oauthIdentityKey = (identity: { issuer: string; subject: string }): string =>
  `${canonicalIssuer(identity.issuer)}\n${identity.subject}`

/**
 * True when a recorded OAuth provider (`issuer`, `subject`) names `identity`. The service's own
 * issuer (`SERVICE_OIDC_ISSUER`) names no provider: a row linked by a service token before issuers
 * were recorded by provider holds it, and names its person by subject alone, as it did then (it
 * still logs them in, and still refuses anyone else the same subject); so does `oidcClaims` that
 * copy a service token's `iss` to add an audience to an identity the user holds.
 */
export function namesOAuthIdentity(
  row: { issuer: string; subject: string },
  identity: { issuer: string; subject: string },
): boolean {
  if (row.subject !== identity.subject) return false
  if (row.issuer === SERVICE_OIDC_ISSUER || identity.issuer === SERVICE_OIDC_ISSUER) return true
  return canonicalIssuer(row.issuer) === canonicalIssuer(identity.issuer)
}
