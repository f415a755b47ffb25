import { refuseOverLimit } from '../domain/resourceLimits.ts'
import { findUser } from '../domain/users.ts'
import { ConflictError } from '../kernel/base/errors.ts'
import { defineActivity } from '../kernel/registry.ts'

export const createUserTag = defineActivity('create_user_tag', {
  parse: (r) => ({ userTagName: r.string('userTagName', { max: 256 }), userIds: r.ids('userIds') }),
  run: async (ctx, p) => {
    const tags = await ctx.tx.findBy('userTags', 'organizationId', ctx.organization.id)
    if (tags.some((tag) => tag.name === p.userTagName))
      throw new ConflictError({
        field: 'parameters.userTagName',
        message: `a user tag named ${p.userTagName} exists`,
      })
    refuseOverLimit('userTagsPerOrganization', {
      held: tags.length,
      adding: 1,
      owner: ctx.organization.id,
      field: 'parameters.userTagName',
    })
    for (const [index, userId] of p.userIds.entries())
      await findUser(ctx.tx, ctx.organization.id, userId, `parameters.userIds[${index}]`)
    const id = ctx.newId()
    await ctx.tx.put('userTags', {
      id,
      organizationId: ctx.organization.id,
      name: p.userTagName,
      userIds: p.userIds,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    return { userTagId: id, userIds: p.userIds }
  },
})
