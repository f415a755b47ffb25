import { assertRootKeepsAccess } from '../domain/sessions.ts'
import { findUser } from '../domain/users.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { NotFoundError } from '../kernel/base/errors.ts'
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
        throw new NotFoundError({
          code: 'AUTHENTICATOR_NOT_FOUND',
          field: `parameters.authenticatorIds[${index}]`,
          message: `user ${user.id} has no authenticator ${id}`,
        })
      await ctx.tx.delete('authenticators', id)
    })
    await assertRootKeepsAccess(ctx, user, 'parameters.authenticatorIds')
    return { authenticatorIds: p.authenticatorIds }
  },
})
