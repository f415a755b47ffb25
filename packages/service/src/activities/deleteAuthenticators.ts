import { assertRootKeepsAccess } from '../domain/sessions.ts'
import { findUser } from '../domain/users.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { ApiError } from '../kernel/base/errors.ts'
import { defineActivity } from '../kernel/registry.ts'

export const deleteAuthenticators = defineActivity('delete_authenticators', {
  parse: (r) => ({
    userId: r.string('userId', { max: 200 }),
    authenticatorIds: r.ids('authenticatorIds', { min: 1 }),
  }),
  run: async (ctx, p) => {
    const user = await findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
    await mapInOrder(p.authenticatorIds, async (id, index) => {
      const authenticator = await ctx.tx.get('authenticators', id)
      if (!authenticator || authenticator.userId !== user.id)
        throw new ApiError(
          'AUTHENTICATOR_NOT_FOUND',
          `user ${user.id} has no authenticator ${id}`,
          `parameters.authenticatorIds[${index}]`,
        )
      await ctx.tx.delete('authenticators', id)
    })
    await assertRootKeepsAccess(ctx, user, 'parameters.authenticatorIds')
    return { authenticatorIds: p.authenticatorIds }
  },
})
