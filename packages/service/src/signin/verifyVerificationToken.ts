import type { VerificationTokenClaims } from '@latchkey/protocol'
import { hexToBytes } from '@noble/hashes/utils.js'
import { CredentialError } from '../kernel/base/errors.ts'
import { CryptoInputError, verifyJwt } from '../kernel/crypto/index.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { OrganizationRow } from '../kernel/store/model.ts'
import { signInState } from './signInState.ts'

/**
 * Verifies an OTP verification token (signature by the sign-in key, expiry, claims) for use in
 * `organization`: a token is accepted only in the organization that minted it and in that
 * organization's sub-organizations (a token minted by the auth proxy of a parent logs in to its
 * sub-organizations; one minted inside a sub-organization works nowhere else).
 */
export async function verifyVerificationToken(
  runtime: Runtime,
  token: unknown,
  field: string,
  organization: Pick<OrganizationRow, 'id' | 'parentOrganizationId'>,
): Promise<VerificationTokenClaims> {
  if (typeof token !== 'string')
    throw new CredentialError({
      code: 'VERIFICATION_TOKEN_INVALID',
      field,
      reason: 'must be a verification token',
    })
  let claims: Partial<VerificationTokenClaims>
  try {
    claims = verifyJwt(
      token,
      hexToBytes(signInState(runtime).keys.publicKey),
      Math.floor(runtime.now() / 1000),
    )
  } catch (error) {
    if (!(error instanceof CryptoInputError)) throw error
    const expired = /expired/.test(error.message)
    throw new CredentialError({
      code: 'VERIFICATION_TOKEN_INVALID',
      field,
      message: expired
        ? `${field} has expired; verify a new code`
        : `${field} is not a valid verification token`,
    })
  }
  if (
    typeof claims.id !== 'string' ||
    typeof claims.contact !== 'string' ||
    typeof claims.exp !== 'number' ||
    (claims.verification_type !== 'OTP_TYPE_EMAIL' && claims.verification_type !== 'OTP_TYPE_SMS')
  )
    throw new CredentialError({
      code: 'VERIFICATION_TOKEN_INVALID',
      field,
      reason: 'is not a verification token',
    })
  const minted = claims.organization_id
  if (
    typeof minted !== 'string' ||
    (minted !== organization.id && minted !== organization.parentOrganizationId)
  )
    throw new CredentialError({
      code: 'VERIFICATION_TOKEN_INVALID',
      field,
      reason: 'was issued for another organization; verify a code here',
    })
  return claims as VerificationTokenClaims
}
