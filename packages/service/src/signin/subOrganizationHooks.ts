import type { OauthProviderParams, OauthProviderParamsV2 } from '@latchkey/protocol'
import { mapInOrder } from '../async.ts'
import { ApiError } from '../errors.ts'
import type { ServicePlugin, SubOrganizationHookContext } from '../registry.ts'
import type { UserRow } from '../store/model.ts'
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
    for (const [index, params] of providers.entries()) {
      const itemField = `${field}[${index}]`
      const named = 'oidcClaims' in params ? params.oidcClaims : undefined
      const claims = named ?? oidc.verify(params.oidcToken ?? '', `${itemField}.oidcToken`)
      const taken = (
        await mapInOrder(
          (
            await ctx.tx.findBy('oauthProviders', 'subject', claims.sub)
          ).filter((row) => row.issuer === claims.iss),
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
        throw new ApiError(
          'ALREADY_EXISTS',
          'this OAuth account is already linked to an account of this organization; log in instead',
          `${itemField}.${named ? 'oidcClaims' : 'oidcToken'}`,
        )
      await ctx.tx.put('oauthProviders', {
        id: ctx.newId(),
        organizationId: user.organizationId,
        userId: user.id,
        providerName: params.providerName,
        issuer: claims.iss,
        audience: claims.aud,
        subject: claims.sub,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
    }
  },
  async verificationToken(ctx: SubOrganizationHookContext, token: string, rootUsers: UserRow[]) {
    const field = 'parameters.verificationToken'
    const claims = await verifyVerificationToken(ctx.runtime, token, field, ctx.organization)
    const email = claims.verification_type === 'OTP_TYPE_EMAIL'
    const proven = rootUsers.some((user) =>
      email
        ? user.userEmail?.trim().toLowerCase() === claims.contact
        : user.userPhoneNumber === claims.contact,
    )
    if (!proven)
      throw new ApiError(
        'VERIFICATION_TOKEN_INVALID',
        `the verification token proves ${email ? 'an e-mail address' : 'a phone number'} that no root user has`,
        field,
      )
    // One account per proven contact among the parent's sub-organizations, checked inside the
    // transaction (transactions run one at a time), so a race of sign-ups cannot create two.
    const sameContact = (user: UserRow) =>
      email
        ? user.userEmail?.trim().toLowerCase() === claims.contact
        : user.userPhoneNumber === claims.contact
    let taken = false
    for (const org of await ctx.tx.findBy('organizations', 'parentOrganizationId', ctx.organization.id))
      if (
        org.id !== ctx.subOrganization.id &&
        (await ctx.tx.findBy('users', 'organizationId', org.id)).some(sameContact)
      )
        taken = true
    if (taken)
      throw new ApiError(
        'ALREADY_EXISTS',
        `an account with this ${email ? 'e-mail address' : 'phone number'} exists; log in instead`,
        field,
      )
    await spendOnce(ctx, 'verification-token-signup', claims.id, {
      errorCode: 'ALREADY_EXISTS',
      message: 'this verification token was already used to sign up; log in instead',
      field,
    })
  },
}
