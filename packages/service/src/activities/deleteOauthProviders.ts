import { oauthValue, releaseUnheld } from '../domain/claimedValues.ts'
import { assertRootKeepsAccess } from '../domain/sessions.ts'
import { findUser } from '../domain/users.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { NotFoundError } from '../kernel/base/errors.ts'
import { defineActivity } from '../kernel/registry.ts'

/**
 * Unlinks OIDC identities from a user of this organization (`removeOauthProviders`); never the
 * only root user's last way back in. An identity no user of the account holds any more gives up
 * its claim (kernel/accountClaims.ts): it may be imported or linked to another account.
 */
export const deleteOauthProviders = defineActivity('delete_oauth_providers', {
  parse: (r) => ({
    userId: r.string('userId', { max: 200 }),
    providerIds: r.ids('providerIds', { min: 1, max: 100 }),
  }),
  run: async (ctx, p) => {
    const user = await findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
    const removed = await mapInOrder(p.providerIds, async (providerId, index) => {
      const row = await ctx.tx.get('oauthProviders', providerId)
      if (!row || row.userId !== user.id)
        throw new NotFoundError({
          code: 'OAUTH_PROVIDER_NOT_FOUND',
          field: `parameters.providerIds[${index}]`,
          message: `OAuth provider ${providerId} not found on user ${user.id}`,
        })
      await ctx.tx.delete('oauthProviders', providerId)
      return oauthValue(row)
    })
    await assertRootKeepsAccess(ctx, user, 'parameters.providerIds')
    await releaseUnheld(ctx.tx, ctx.organization, removed)
    return { providerIds: p.providerIds }
  },
})
