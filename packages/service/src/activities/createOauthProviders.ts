import { canonicalIssuer, namesOAuthIdentity, type OauthProviderParams } from '@latchkey/protocol'
import { accountHook } from '../domain/accountHooks.ts'
import { readOauthProviderParamsV2 } from '../domain/params.ts'
import { checkResourceLimit } from '../domain/resourceLimits.ts'
import { findUser } from '../domain/users.ts'
import { ApiError, ConflictError, PermissionError } from '../kernel/base/errors.ts'
import { defineActivity } from '../kernel/registry.ts'

/**
 * Links OIDC identities to a user of this organization (`addOauthProvider` of @turnkey/core).
 * Each `oidcToken` is verified by the sign-in plugin as at sign-up, and an identity belongs to
 * one account among the parent organization's sub-organizations. `oidcClaims` are not proof of
 * anything, so they only add another audience (client id) to an identity this user already has
 * or links with a token in the same request; anything else would let a user claim a stranger's
 * identity and capture that person's next OAuth login.
 */
export const createOauthProviders = defineActivity('create_oauth_providers', {
  // The OIDC tokens it links are no reader's to take from its record (`bearerParameters`).
  bearerParameters: ['oauthProviders[].oidcToken'],
  parse: (r) => ({
    userId: r.string('userId', { max: 200 }),
    oauthProviders: r.array('oauthProviders', readOauthProviderParamsV2, { min: 1, max: 10 }),
  }),
  run: async (ctx, p) => {
    const user = await findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
    // Every item adds a row, by token or by claims: counted before any is read or linked.
    await checkResourceLimit(ctx.tx, 'oauthProvidersPerUser', {
      owner: user.id,
      adding: p.oauthProviders.length,
      field: 'parameters.oauthProviders',
    })
    const before = new Set((await ctx.tx.findBy('oauthProviders', 'userId', user.id)).map((row) => row.id))
    const withToken = p.oauthProviders.flatMap((item, index) =>
      item.oidcToken !== undefined ? [{ index, params: item as OauthProviderParams }] : [],
    )
    const providerIds: string[] = []
    if (withToken.length > 0) {
      const { hook, hookContext } = await accountHook(ctx, 'oauthProviders', 'parameters.oauthProviders')
      // One call per item, so an error names the item's own index.
      for (const { index, params } of withToken) {
        const field = `parameters.oauthProviders[${index}]`
        try {
          await hook(hookContext, user, [params], 'parameters.oauthProviders')
        } catch (error) {
          // The hook numbers the one item it got [0]; name the item's place in the request.
          const wrong = 'parameters.oauthProviders[0]'
          if (error instanceof ApiError && index !== 0 && error.field?.startsWith(wrong))
            throw new ApiError(
              error.errorCode,
              error.message,
              `${field}${error.field.slice(wrong.length)}`,
              error.extra,
            )
          throw error
        }
        const added = (await ctx.tx.findBy('oauthProviders', 'userId', user.id)).filter(
          (row) => !before.has(row.id),
        )
        for (const row of added) {
          before.add(row.id)
          providerIds.push(row.id)
        }
      }
    }
    const linked = await ctx.tx.findBy('oauthProviders', 'userId', user.id)
    for (const [index, item] of p.oauthProviders.entries()) {
      const claims = item.oidcClaims
      if (!claims) continue
      const field = `parameters.oauthProviders[${index}].oidcClaims`
      const identity = { issuer: canonicalIssuer(claims.iss), subject: claims.sub }
      const same = linked.filter((row) => namesOAuthIdentity(row, identity))
      if (same.length === 0)
        throw new PermissionError({
          field,
          reason: 'names an identity this user has not proven; link it with an oidcToken first',
        })
      if (same.some((row) => row.audience === claims.aud))
        throw new ConflictError({
          field: `${field}.aud`,
          message: `${field}: this audience is already linked to the user`,
        })
      const id = ctx.newId()
      const row = await ctx.tx.put('oauthProviders', {
        id,
        organizationId: user.organizationId,
        userId: user.id,
        providerName: item.providerName,
        // The provider's issuer as the identity's first row recorded it.
        issuer: same[0]!.issuer,
        audience: claims.aud,
        subject: claims.sub,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
      linked.push(row)
      providerIds.push(id)
    }
    return { providerIds }
  },
})
