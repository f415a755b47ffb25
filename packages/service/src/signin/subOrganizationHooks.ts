import {
  namesOAuthIdentity,
  type OauthProviderParams,
  type OauthProviderParamsV2,
  oauthIdentityKey,
  oauthIdentityOf,
  type VerificationTokenClaims,
} from '@latchkey/protocol'
import { accountHolds } from '../domain/claimedValues.ts'
import { assertProviderIssuer } from '../domain/oauthIssuers.ts'
import { checkResourceLimit } from '../domain/resourceLimits.ts'
import {
  accountsHoldingContact,
  type ContactKind,
  contactKindOf,
  withContact,
} from '../domain/verifiedContact.ts'
import { type AccountClaim, claimForAccount, claimIfFree } from '../kernel/accountClaims.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { ConflictError, CredentialError, FieldError } from '../kernel/base/errors.ts'
import { Reader } from '../kernel/Reader.ts'
import type { ServicePlugin, SubOrganizationHookContext, VerificationTokenProof } from '../kernel/registry.ts'
import type { UserRow } from '../kernel/store/model.ts'
import {
  readClientSignature,
  requireTokenSignature,
  signedMessage,
} from './clientSignature/checkClientSignature.ts'
import { tokenProvesEmail } from './oauth/createServiceOidc.ts'
import { signInState } from './signInState.ts'
import { spendOnce } from './spendOnce.ts'
import { verifyVerificationToken } from './verifyVerificationToken.ts'

/**
 * `create_sub_organization`'s sign-in parts. `oauthProviders` links each OIDC token issued by
 * `oauth2_authenticate` (verified), or the `oidcClaims` the caller vouches for; an issuer/subject
 * can belong to one account per parent organization. `verificationToken` must prove the e-mail or phone number of a root user, have
 * been minted in this (parent) organization, and is spent by the sign-up in the same transaction
 * that creates the account, so concurrent sign-ups with one token create one sub-organization.
 */
export const subOrganizationHooks: NonNullable<ServicePlugin['subOrganization']> = {
  async oauthProviders(
    ctx: SubOrganizationHookContext,
    user: UserRow,
    providers: (OauthProviderParams | OauthProviderParamsV2)[],
    field: string,
  ) {
    const { oidc } = signInState(ctx.runtime)
    // Whichever activity links them (sign-up, create_users, create_oauth_providers), one row each.
    await checkResourceLimit(ctx.tx, 'oauthProvidersPerUser', {
      owner: user.id,
      adding: providers.length,
      field,
    })
    for (const [index, params] of providers.entries()) {
      const itemField = `${field}[${index}]`
      const named = 'oidcClaims' in params ? params.oidcClaims : undefined
      const verified = named
        ? undefined
        : oidc.verify(params.oidcToken ?? '', ctx.organization, `${itemField}.oidcToken`)
      const claims = named ?? verified!
      const claimField = `${itemField}.${named ? 'oidcClaims' : 'oidcToken'}`
      // The person is the provider's issuer and subject (a service token names the provider as
      // idp_iss), recorded and compared as an import records them (@latchkey/protocol oauthIdentity).
      const identity = oauthIdentityOf(claims)
      if (!identity) throw new FieldError({ field: claimField, reason: 'names no issuer and subject' })
      if (named) assertProviderIssuer(identity.issuer, `${claimField}.iss`)
      const taken = (
        await mapInOrder(
          (
            await ctx.tx.findBy('oauthProviders', 'subject', identity.subject)
          ).filter((row) => namesOAuthIdentity(row, identity)),
          async (row) => {
            const org = await ctx.tx.get('organizations', row.organizationId)
            return (
              row.organizationId === ctx.subOrganization.id ||
              org?.parentOrganizationId === ctx.organization.id
            )
          },
        )
      ).some(Boolean)
      if (taken)
        throw new ConflictError({
          field: claimField,
          message: 'this OAuth account is already linked to an account of this organization; log in instead',
        })
      // A concurrent import or link of the same identity meets the claim's primary key.
      if (ctx.subOrganization.parentOrganizationId === ctx.organization.id)
        await claimForAccount(
          ctx.tx,
          {
            organizationId: ctx.organization.id,
            kind: 'oauth',
            value: oauthIdentityKey(identity),
            subOrganizationId: ctx.subOrganization.id,
            field: claimField,
            now: ctx.now,
          },
          async (held) =>
            !(await ctx.tx.findBy('oauthProviders', 'organizationId', held.subOrganizationId)).some((row) =>
              namesOAuthIdentity(row, identity),
            ),
        )
      // One token makes one link: a copy of it (intercepted, or the same token after the identity
      // was unlinked) links no other account. `oauth_login` spends it apart, as the published
      // sign-up then logs in with the same token.
      if (verified)
        await spendOnce(ctx, 'oidc-token-link', verified.jti, {
          errorCode: 'OIDC_TOKEN_REPLAYED',
          message:
            'this OIDC token was already used to link an OAuth account; sign in with the provider again',
          field: `${itemField}.oidcToken`,
        })
      await ctx.tx.put('oauthProviders', {
        id: ctx.newId(),
        organizationId: user.organizationId,
        userId: user.id,
        providerName: params.providerName,
        issuer: identity.issuer,
        audience: claims.aud,
        subject: identity.subject,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
      // The provider vouches for the e-mail address its token carries when it says it verified it
      // (`email_verified`); a token that does not say links the identity and leaves the address
      // unverified. Claims the caller vouches for (`oidcClaims`) carry no address the provider vouched for.
      const row = (await ctx.tx.get('users', user.id)) ?? user
      const email = verified && tokenProvesEmail(verified) ? verified.email!.trim().toLowerCase() : undefined
      if (
        email !== undefined &&
        row.userEmailUnverified &&
        row.userEmail?.trim().toLowerCase() === email &&
        !(await verifiedElsewhere(ctx, 'email', email)) &&
        // A verified address routes logins: claimed like one a verification token proves.
        (await claimContact(ctx, { kind: 'email', value: email, field: itemField }, 'quietly'))
      )
        await ctx.tx.put('users', withContact(row, 'email', row.userEmail, true))
    }
  },
  async verificationToken(
    ctx: SubOrganizationHookContext,
    token: string,
    rootUsers: UserRow[],
    proof: VerificationTokenProof,
  ) {
    const field = 'parameters.verificationToken'
    const claims = await verifyVerificationToken(ctx.runtime, token, field, ctx.organization)
    const kind = contactKindOf(claims.verification_type)
    const email = kind === 'email'
    // The rows as written by this activity: their contacts are not verified yet.
    const contactOf = (user: UserRow) => (email ? user.userEmail?.trim().toLowerCase() : user.userPhoneNumber)
    const holders = rootUsers.filter((user) => contactOf(user) === claims.contact)
    if (holders.length === 0)
      throw new CredentialError({
        code: 'VERIFICATION_TOKEN_INVALID',
        field,
        message: `the verification token proves ${email ? 'an e-mail address' : 'a phone number'} that no root user has`,
      })
    if (!(await boundKeyProven(ctx, { token, claims, holders, proof }))) return false
    // One account per proven contact among the parent's sub-organizations, checked inside the
    // transaction (transactions run one at a time), so a race of sign-ups cannot create two.
    if (await verifiedElsewhere(ctx, kind, claims.contact))
      throw new ConflictError({
        field,
        message: `an account with this ${email ? 'e-mail address' : 'phone number'} exists; log in instead`,
      })
    // The proven contact's claim (kernel/accountClaims.ts): an import or pregeneration of the same
    // contact racing this sign-up, on another instance too, meets its primary key.
    await claimContact(ctx, {
      kind,
      value: claims.contact,
      field,
      message: `an account with this ${email ? 'e-mail address' : 'phone number'} exists; log in instead`,
    })
    await spendOnce(ctx, 'verification-token-signup', claims.id, {
      errorCode: 'ALREADY_EXISTS',
      message: 'this verification token was already used to sign up; log in instead',
      field,
    })
    // Read again: an OIDC token of the same request may have verified the other contact.
    for (const user of holders)
      await ctx.tx.put(
        'users',
        withContact((await ctx.tx.get('users', user.id)) ?? user, kind, claims.contact, true),
      )
    return true
  },
}

/**
 * Claims a contact the account `ctx.subOrganization` now holds verified, under its parent (a
 * top-level organization's own users claim nothing): refused naming the field when another account
 * of the parent holds it, or, `quietly`, false. A claim whose account no longer holds the contact
 * is taken over.
 */
async function claimContact(
  ctx: SubOrganizationHookContext,
  claim: Pick<AccountClaim, 'field' | 'message'> & { kind: ContactKind; value: string },
  mode: 'refuse' | 'quietly' = 'refuse',
): Promise<boolean> {
  if (ctx.subOrganization.parentOrganizationId !== ctx.organization.id) return true
  const full: AccountClaim = {
    ...claim,
    organizationId: ctx.organization.id,
    subOrganizationId: ctx.subOrganization.id,
    now: ctx.now,
  }
  const stale = async (held: { subOrganizationId: string }) =>
    !(await accountHolds(ctx.tx, held.subOrganizationId, claim))
  if (mode === 'quietly') return claimIfFree(ctx.tx, full, stale)
  await claimForAccount(ctx.tx, full, stale)
  return true
}

/** True when another sub-organization of the parent holds `contact` verified. */
async function verifiedElsewhere(
  ctx: SubOrganizationHookContext,
  kind: ContactKind,
  contact: string,
): Promise<boolean> {
  const holders = await accountsHoldingContact(ctx.tx, {
    parentId: ctx.organization.id,
    kind,
    contact,
    exceptId: ctx.subOrganization.id,
  })
  return holders.length > 0
}

/**
 * Whether the request proves the key the token is bound to at `otp_verify`: stamped by it, or
 * carrying its `clientSignature` (the seed's hex signature over the token, or the published
 * object whose USAGE_TYPE_SIGNUP message names the token and the holder's API keys), or made by
 * the auth proxy's user, whose sign-up route checked the client's signature before forwarding.
 * Anything else refuses, or is false when an unproven token only leaves a contact unverified.
 */
async function boundKeyProven(
  ctx: SubOrganizationHookContext,
  {
    token,
    claims,
    holders,
    proof,
  }: { token: string; claims: VerificationTokenClaims; holders: UserRow[]; proof: VerificationTokenProof },
): Promise<boolean> {
  const bound = claims.public_key
  if (!bound) return true
  if (ctx.caller.credential.publicKey.toLowerCase() === bound) return true
  const field = 'parameters.clientSignature'
  if (proof.clientSignature !== undefined) {
    const signature = readClientSignature(
      new Reader({ clientSignature: proof.clientSignature }, 'parameters'),
    )!
    if (typeof signature === 'string') requireTokenSignature(signature, token, bound, field)
    else {
      const message = signedMessage(signature, { ...claims, public_key: bound }, 'USAGE_TYPE_SIGNUP', field)
      const usage = (message.signupV2 ?? message.signup ?? {}) as { apiKeys?: { publicKey?: unknown }[] }
      const signed = (usage.apiKeys ?? []).map((key) => String(key.publicKey).toLowerCase()).sort()
      const keys: string[] = []
      for (const user of holders)
        for (const key of await ctx.tx.findBy('apiKeys', 'userId', user.id)) keys.push(key.publicKey)
      if (signed.join() !== keys.sort().join())
        throw new CredentialError({
          code: 'CLIENT_SIGNATURE_INVALID',
          field: `${field}.message`,
          reason: "does not list this sign-up's apiKeys: the key given at otp_verify did not consent to them",
        })
    }
    return true
  }
  const config = (await ctx.tx.findBy('proxyConfigs', 'organizationId', ctx.organization.id))[0]
  if (config?.proxyUserId !== undefined && config.proxyUserId === ctx.caller.userId) return true
  if (proof.otherwise === 'unverified') return false
  throw new CredentialError({
    code: 'CLIENT_SIGNATURE_INVALID',
    field,
    reason:
      'is required: the verification token is bound to a key that did not stamp this request; stamp it with that key or send its clientSignature',
  })
}
