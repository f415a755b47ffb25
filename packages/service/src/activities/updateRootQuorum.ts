import { findUser } from '../domain/users.ts'
import { defineActivity } from '../kernel/registry.ts'
import { MAX_ROOT_USERS, readQuorumThreshold } from './createSubOrganization.ts'

/**
 * Replaces the organization's root quorum: its root users (users of this organization) and how
 * many of them must approve. A user taken out keeps its credentials and from then on acts only
 * where a policy allows (the delegated access of a back end that created a sub-organization with
 * its own key among the root users). Decided like any activity: by the current root quorum.
 */
export const updateRootQuorum = defineActivity('update_root_quorum', {
  parse: (r) => {
    const userIds = r.ids('userIds', { min: 1, max: MAX_ROOT_USERS })
    return { threshold: readQuorumThreshold(r, 'threshold', userIds.length), userIds }
  },
  run: async (ctx, p) => {
    for (const [index, userId] of p.userIds.entries())
      await findUser(ctx.tx, ctx.organization.id, userId, `parameters.userIds[${index}]`)
    // The row as this transaction sees it, not as it was when the request came in.
    const organization = (await ctx.tx.get('organizations', ctx.organization.id)) ?? ctx.organization
    await ctx.tx.put('organizations', {
      ...organization,
      rootUserIds: p.userIds,
      rootQuorumThreshold: p.threshold,
      updatedAt: ctx.now,
    })
    return {}
  },
})
