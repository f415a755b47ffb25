import { findUser } from '../domain/users.ts'
import { defineActivity } from '../registry.ts'

export const updateUserName = defineActivity('update_user_name', {
  parse: (r) => ({ userId: r.string('userId', { max: 200 }), userName: r.string('userName', { max: 256 }) }),
  run: (ctx, p) => {
    const user = findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
    ctx.tx.put('users', { ...user, userName: p.userName, updatedAt: ctx.now })
    return { userId: user.id }
  },
})
