import {
  ATTESTED_STAMP_HEADER,
  ATTESTED_STAMP_SCHEMES,
  type AttestedStampScheme,
  namesOAuthIdentity,
  oauthIdentityOf,
} from '@latchkey/protocol'
import { base64urlnopad } from '@scure/base'
import { ATTESTED_CREDENTIAL_PREFIX } from '../../domain/sessions.ts'
import { contactKindOf, holdsVerifiedContact, usersHoldingContact } from '../../domain/verifiedContact.ts'
import {
  AuthenticationError,
  CredentialError,
  NotFoundError,
  PermissionError,
} from '../../kernel/base/errors.ts'
import { verifyApiKeyStamp } from '../../kernel/crypto/index.ts'
import type { Runtime } from '../../kernel/Runtime.ts'
import type { Caller } from '../../kernel/registry.ts'
import type { OauthProviderRow, OrganizationRow, UserRow } from '../../kernel/store/model.ts'
import { oidcNonce } from '../oauth/oidcNonce.ts'
import { isCompressedP256PublicKey } from '../otp/createOtpEngine.ts'
import { signInState } from '../signInState.ts'
import { verifyVerificationToken } from '../verifyVerificationToken.ts'

interface AttestedStamp {
  publicKeyAttestation: string
  scheme: AttestedStampScheme
  publicKey: string
  signature: string
}

const malformed = (why: string) =>
  new AuthenticationError({
    code: 'STAMP_MALFORMED',
    message: `${ATTESTED_STAMP_HEADER} is malformed: ${why}`,
  })

function decode(header: string): AttestedStamp {
  let value: Partial<AttestedStamp>
  try {
    value = JSON.parse(new TextDecoder().decode(base64urlnopad.decode(header.replace(/=+$/, ''))))
  } catch {
    throw malformed('not base64url JSON')
  }
  if (typeof value !== 'object' || value === null) throw malformed('not a JSON object')
  for (const field of ['publicKeyAttestation', 'publicKey', 'signature'] as const)
    if (typeof value[field] !== 'string' || !value[field] || value[field].length > 8192)
      throw malformed(`${field} is missing`)
  if (!ATTESTED_STAMP_SCHEMES.includes(value.scheme as AttestedStampScheme))
    throw malformed(`scheme must be one of ${ATTESTED_STAMP_SCHEMES.join(', ')}`)
  const publicKey = value.publicKey!.toLowerCase()
  if (!isCompressedP256PublicKey(publicKey)) throw malformed('publicKey must be a compressed P-256 key (hex)')
  return { ...(value as AttestedStamp), publicKey }
}

/**
 * `X-Stamp-Attested`: the published clients' OTP and OAuth login (`stamp_login`). The stamp is
 * the session key's own signature over the body, and its `publicKeyAttestation` is the token
 * that vouches for that key: a verification token bound to it at `otp_verify`, or an OIDC token
 * whose nonce is its hash. The caller is the user the token names in the organization the body
 * acts in. Proof of possession is the stamp itself, so the session can only go to a key its
 * holder signed for; the token is spent by `stamp_login` (one login per token).
 */
export async function verifyAttestedStamp(
  runtime: Runtime,
  header: string,
  body: Uint8Array,
  targetOrganizationId: string | undefined,
): Promise<Caller> {
  const stamp = decode(header)
  let valid = false
  try {
    valid = verifyApiKeyStamp(
      { publicKey: stamp.publicKey, scheme: 'SIGNATURE_SCHEME_TK_API_P256', signature: stamp.signature },
      body,
    )
  } catch {
    valid = false
  }
  if (!valid)
    throw new AuthenticationError({
      code: 'STAMP_INVALID',
      message: 'stamp signature does not match the request body',
    })
  const organization = targetOrganizationId
    ? await runtime.store.get('organizations', targetOrganizationId)
    : undefined
  if (!organization)
    throw new NotFoundError({
      code: 'ORGANIZATION_NOT_FOUND',
      field: 'organizationId',
      reason: 'must name the account to log in to',
    })
  const field = `${ATTESTED_STAMP_HEADER}.publicKeyAttestation`
  // The published clients name the parent organization when they do not know the account's
  // sub-organization yet (loginWithOtp without organizationId): the account is then the one of
  // its sub-organizations the token's contact or OAuth identity belongs to, as for otp_login.
  // Like the proxy, never into the parent organization itself (the operator's). The token is
  // verified first, and the account is found through the index of the token's contact or
  // identity, a get of its organization each: a request names the parent without any account,
  // so it must not read the parent's sub-organizations, nor their users.
  const parentOf = new Map<string, OrganizationRow | undefined>()
  const accountOf = async (organizationId: string): Promise<OrganizationRow | undefined> => {
    if (organization.parentOrganizationId !== undefined)
      return organizationId === organization.id ? organization : undefined
    if (!parentOf.has(organizationId))
      parentOf.set(organizationId, await runtime.store.get('organizations', organizationId))
    const account = parentOf.get(organizationId)
    return account?.parentOrganizationId === organization.id ? account : undefined
  }
  const credential = async (id: string, userId: string): Promise<Caller> => ({
    userId,
    organizationId: (await runtime.store.get('users', userId))!.organizationId,
    credential: {
      kind: 'API_KEY',
      id: `${ATTESTED_CREDENTIAL_PREFIX}${id}`,
      publicKey: stamp.publicKey,
      scheme: stamp.scheme,
      signature: stamp.signature,
    },
    readOnly: false,
  })

  if (stamp.scheme === 'STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN') {
    const claims = await verifyVerificationToken(runtime, stamp.publicKeyAttestation, field, organization)
    if (claims.public_key !== stamp.publicKey)
      throw new AuthenticationError({
        code: 'STAMP_INVALID',
        field,
        message: 'the verification token is not bound to the key that signed this request',
      })
    const email = claims.verification_type === 'OTP_TYPE_EMAIL'
    const kind = contactKindOf(claims.verification_type)
    let found: { user: UserRow; home: OrganizationRow } | undefined
    for (const user of await usersHoldingContact(runtime.store, kind, claims.contact)) {
      if (!holdsVerifiedContact(user, kind, claims.contact)) continue
      const home = await accountOf(user.organizationId)
      if (home) {
        found = { user, home }
        break
      }
    }
    if (!found)
      throw new NotFoundError({
        code: 'USER_NOT_FOUND',
        field,
        message: `no user with this ${email ? 'e-mail address' : 'phone number'} in organization ${organization.id} or its sub-organizations`,
      })
    const { user, home } = found
    if (email ? home.disableOtpEmailAuth || home.disableEmailAuth : home.disableSmsAuth)
      throw new PermissionError({
        field,
        message: `${email ? 'e-mail' : 'SMS'} OTP sign-in is disabled for organization ${home.id}`,
      })
    return credential(`verification-token:${claims.id}`, user.id)
  }

  const claims = signInState(runtime).oidc.verify(stamp.publicKeyAttestation, organization, field)
  if (claims.nonce !== oidcNonce(stamp.publicKey))
    throw new CredentialError({
      code: 'NONCE_MISMATCH',
      field,
      message: "the OIDC token's nonce is not the SHA-256 of the key that signed this request",
    })
  const identity = oauthIdentityOf(claims)!
  let link: OauthProviderRow | undefined
  for (const row of await runtime.store.findBy('oauthProviders', 'subject', claims.sub))
    if (namesOAuthIdentity(row, identity) && (await accountOf(row.organizationId))) {
      link = row
      break
    }
  if (!link)
    throw new NotFoundError({
      code: 'ACCOUNT_NOT_FOUND',
      field,
      message: `no user of organization ${organization.id} is linked to this OAuth account; sign up first`,
    })
  return credential(`oidc-token:${claims.jti}`, link.userId)
}
