import { findUser } from '../domain/users.ts'
import { ConflictError, FieldError, NotFoundError } from '../kernel/base/errors.ts'
import { defineActivity } from '../kernel/registry.ts'

/** Renames a tag and adds/removes users, all or nothing (the transaction makes it atomic). */
export const updateUserTag = defineActivity('update_user_tag', {
  parse: (r) => {
    const newUserTagName = r.optString('newUserTagName', { max: 256 })
    return {
      userTagId: r.string('userTagId', { max: 200 }),
      ...(newUserTagName !== undefined ? { newUserTagName } : {}),
      addUserIds: r.ids('addUserIds'),
      removeUserIds: r.ids('removeUserIds'),
    }
  },
  run: async (ctx, p) => {
    const tag = await ctx.tx.get('userTags', p.userTagId)
    if (!tag || tag.organizationId !== ctx.organization.id)
      throw new NotFoundError({
        code: 'USER_TAG_NOT_FOUND',
        field: 'parameters.userTagId',
        message: `user tag ${p.userTagId} not found`,
      })
    const both = p.addUserIds.find((id) => p.removeUserIds.includes(id))
    if (both !== undefined)
      throw new FieldError({
        field: 'parameters.removeUserIds',
        message: `user ${both} is both added and removed`,
      })
    if (p.newUserTagName !== undefined && p.newUserTagName !== tag.name) {
      const taken = (await ctx.tx.findBy('userTags', 'organizationId', ctx.organization.id)).some(
        (other) => other.name === p.newUserTagName,
      )
      if (taken)
        throw new ConflictError({
          field: 'parameters.newUserTagName',
          message: `a user tag named ${p.newUserTagName} exists`,
        })
    }
    for (const [index, id] of p.addUserIds.entries())
      await findUser(ctx.tx, ctx.organization.id, id, `parameters.addUserIds[${index}]`)
    p.removeUserIds.forEach((id, index) => {
      if (!tag.userIds.includes(id))
        throw new NotFoundError({
          code: 'USER_NOT_FOUND',
          field: `parameters.removeUserIds[${index}]`,
          message: `user ${id} does not carry this tag`,
        })
    })
    const userIds = [
      ...tag.userIds.filter((id) => !p.removeUserIds.includes(id)),
      ...p.addUserIds.filter((id) => !tag.userIds.includes(id)),
    ]
    await ctx.tx.put('userTags', { ...tag, name: p.newUserTagName ?? tag.name, userIds, updatedAt: ctx.now })
    return { userTagId: tag.id }
  },
})
