import type { UserParams } from '@latchkey/protocol'
import { accountHook } from '../domain/accountHooks.ts'
import { readRootUser } from '../domain/params.ts'
import { checkResourceLimit } from '../domain/resourceLimits.ts'
import { addNewUserCredentials } from '../domain/users.ts'
import { callerVouchesForContacts, newUserContacts } from '../domain/verifiedContact.ts'
import { NotFoundError, PermissionError } from '../kernel/base/errors.ts'
import { Reader } from '../kernel/Reader.ts'
import { defineActivity } from '../kernel/registry.ts'

/** `oauthProviders` items take `oidcClaims` from this version on. */
const CLAIMS_TYPE = 'ACTIVITY_TYPE_CREATE_USERS_V4'

function readUserParams(value: unknown, field: string, type: string): UserParams {
  const user = readRootUser(value, field, { type, oidcClaims: type === CLAIMS_TYPE })
  const r = new Reader(value, field)
  return { ...user, userTags: r.has('userTags') ? r.ids('userTags', { max: 50 }) : [] }
}

/**
 * Users that are not root users (ACTIVITY_TYPE_CREATE_USERS_V3, and V4 whose OAuth providers may
 * be `oidcClaims`): an app back end with an API key, say, that may act only where a policy allows
 * it. `userTags` are ids of existing user tags. `oidcClaims` are the caller's word, not a proof, so
 * they are taken only in a top-level organization: in a sub-organization its user could claim a
 * stranger's identity and capture that person's first OAuth sign-in.
 */
export const createUsers = defineActivity('create_users', {
  // The OIDC tokens it links are no reader's to take from its record (`bearerParameters`).
  bearerParameters: ['users[].oauthProviders[].oidcToken'],
  // Its record shows the passkeys it registers (kernel/passkeySightings.ts).
  passkeyParameters: ['users[].authenticators[]'],
  parse: (r, type) => ({
    users: r.array('users', (value, field) => readUserParams(value, field, type), { min: 1, max: 100 }),
  }),
  run: async (ctx, p) => {
    if (ctx.organization.parentOrganizationId !== undefined)
      for (const [index, user] of p.users.entries()) {
        const claimed = user.oauthProviders.findIndex((item) => 'oidcClaims' in item && item.oidcClaims)
        if (claimed >= 0)
          throw new PermissionError({
            field: `parameters.users[${index}].oauthProviders[${claimed}].oidcClaims`,
            message:
              'oidcClaims are taken only in a top-level organization; link an identity in a sub-organization with an oidcToken',
          })
      }
    await checkResourceLimit(ctx.tx, 'usersPerOrganization', {
      owner: ctx.organization.id,
      adding: p.users.length,
      field: 'parameters.users',
    })
    const tags = new Map(
      (await ctx.tx.findBy('userTags', 'organizationId', ctx.organization.id)).map((tag) => [tag.id, tag]),
    )
    const vouched = callerVouchesForContacts(ctx)
    const userIds: string[] = []
    for (const [index, params] of p.users.entries()) {
      const field = `parameters.users[${index}]`
      const user = await ctx.tx.put('users', {
        id: ctx.newId(),
        organizationId: ctx.organization.id,
        userName: params.userName,
        // Unproven: a sub-organization's user could otherwise have codes sent to anyone.
        ...newUserContacts(params, vouched),
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
      await addNewUserCredentials(ctx, user, params, field)
      if (params.oauthProviders.length > 0) {
        // Checked and claimed across the parent's accounts, as a link to an existing user is.
        const { hook, hookContext } = await accountHook(ctx, 'oauthProviders', `${field}.oauthProviders`)
        await hook(hookContext, user, params.oauthProviders, `${field}.oauthProviders`)
      }
      for (const [tagIndex, tagId] of params.userTags.entries()) {
        const tag = tags.get(tagId)
        if (!tag)
          throw new NotFoundError({
            code: 'USER_TAG_NOT_FOUND',
            field: `${field}.userTags[${tagIndex}]`,
            message: `user tag ${tagId} not found in organization ${ctx.organization.id}`,
          })
        tags.set(
          tag.id,
          await ctx.tx.put('userTags', { ...tag, userIds: [...tag.userIds, user.id], updatedAt: ctx.now }),
        )
      }
      userIds.push(user.id)
    }
    return { userIds }
  },
})
