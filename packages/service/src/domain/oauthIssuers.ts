import { SERVICE_OIDC_ISSUER } from '@latchkey/protocol'
import { FieldError } from '../kernel/base/errors.ts'

/**
 * Refuses the service's own token issuer where a caller names an identity provider's (an import's
 * `issuer`, a pregeneration's `oidcClaims.iss`): it names no provider, so the identity could never
 * be matched with the same person's sign-ups (@latchkey/protocol `oauthIdentity`).
 */
export function assertProviderIssuer(issuer: string, field: string): void {
  if (issuer === SERVICE_OIDC_ISSUER)
    throw new FieldError({
      field,
      reason:
        "is this service's own token issuer: give the identity provider's (e.g. https://accounts.google.com)",
    })
}
