import { releaseUnheld, valuesOfUser } from '../domain/claimedValues.ts'
import { findUser } from '../domain/users.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { PermissionError } from '../kernel/base/errors.ts'
import { defineActivity } from '../kernel/registry.ts'

/**
 * Deletes non-root users with their credentials, tag memberships and pending import targets, and
 * what the wings keep of them (`ServicePlugin.forget`: their second factors); root users stay. What they
 * held that a claim names (a contact proven with a verification token, an OAuth identity) is
 * released unless another user of the organization still holds it.
 */
export const deleteUsers = defineActivity('delete_users', {
  parse: (r) => ({ userIds: r.ids('userIds', { min: 1 }) }),
  run: async (ctx, p) => {
    const { tx, organization } = ctx
    const users = await mapInOrder(p.userIds, async (userId, index) => {
      const field = `parameters.userIds[${index}]`
      const user = await findUser(tx, organization.id, userId, field)
      if (organization.rootUserIds.includes(user.id))
        throw new PermissionError({
          field,
          message: `user ${user.id} is a root user of organization ${organization.id}; root users cannot be deleted`,
        })
      return user
    })
    const gone = new Set(users.map((user) => user.id))
    const claimed = (await mapInOrder(users, (user) => valuesOfUser(tx, user))).flat()
    for (const plugin of ctx.registry.plugins) await plugin.forget?.(tx, { userIds: [...gone] }, ctx.runtime)
    for (const user of users) {
      for (const key of await tx.findBy('apiKeys', 'userId', user.id)) await tx.delete('apiKeys', key.id)
      for (const passkey of await tx.findBy('authenticators', 'userId', user.id))
        await tx.delete('authenticators', passkey.id)
      for (const provider of await tx.findBy('oauthProviders', 'userId', user.id))
        await tx.delete('oauthProviders', provider.id)
      // A pending import's target key (`init_import_wallet`), sealed for this user alone.
      for (const target of await tx.findBy('importTargets', 'userId', user.id))
        await tx.delete('importTargets', target.id)
      await tx.delete('users', user.id)
    }
    for (const tag of await tx.findBy('userTags', 'organizationId', organization.id))
      if (tag.userIds.some((id) => gone.has(id)))
        await tx.put('userTags', {
          ...tag,
          userIds: tag.userIds.filter((id) => !gone.has(id)),
          updatedAt: ctx.now,
        })
    await releaseUnheld(tx, organization, claimed)
    return { userIds: p.userIds }
  },
})
