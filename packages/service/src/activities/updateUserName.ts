import { findUser } from '../domain/users.ts'
import { defineActivity } from '../kernel/registry.ts'

export const updateUserName = defineActivity('update_user_name', {
  parse: (r) => ({ userId: r.string('userId', { max: 200 }), userName: r.string('userName', { max: 256 }) }),
  run: async (ctx, p) => {
    const user = await findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
    await ctx.tx.put('users', { ...user, userName: p.userName, updatedAt: ctx.now })
    return { userId: user.id }
  },
})
