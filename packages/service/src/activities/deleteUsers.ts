import { findUser } from '../domain/users.ts'
import { ApiError } from '../errors.ts'
import { defineActivity } from '../registry.ts'

/** Deletes non-root users with their credentials and tag memberships; root users stay. */
export const deleteUsers = defineActivity('delete_users', {
  parse: (r) => ({ userIds: r.ids('userIds', { min: 1 }) }),
  run: (ctx, p) => {
    const { tx, organization } = ctx
    const users = p.userIds.map((userId, index) => {
      const field = `parameters.userIds[${index}]`
      const user = findUser(tx, organization.id, userId, field)
      if (organization.rootUserIds.includes(user.id))
        throw new ApiError(
          'PERMISSION_DENIED',
          `user ${user.id} is a root user of organization ${organization.id}; root users cannot be deleted`,
          field,
        )
      return user
    })
    const gone = new Set(users.map((user) => user.id))
    for (const user of users) {
      for (const key of tx.findBy('apiKeys', 'userId', user.id)) tx.delete('apiKeys', key.id)
      for (const passkey of tx.findBy('authenticators', 'userId', user.id))
        tx.delete('authenticators', passkey.id)
      for (const provider of tx.findBy('oauthProviders', 'userId', user.id))
        tx.delete('oauthProviders', provider.id)
      tx.delete('users', user.id)
    }
    for (const tag of tx.findBy('userTags', 'organizationId', organization.id))
      if (tag.userIds.some((id) => gone.has(id)))
        tx.put('userTags', { ...tag, userIds: tag.userIds.filter((id) => !gone.has(id)), updatedAt: ctx.now })
    return { userIds: p.userIds }
  },
})
