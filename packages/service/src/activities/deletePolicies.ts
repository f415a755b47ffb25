import { mapInOrder } from '../kernel/base/async.ts'
import { defineActivity } from '../kernel/registry.ts'
import { findPolicy } from './updatePolicy.ts'

/** Deletes several policies: all of them or, when one is unknown, none. */
export const deletePolicies = defineActivity('delete_policies', {
  parse: (r) => ({ policyIds: r.ids('policyIds', { min: 1 }) }),
  run: async (ctx, p) => {
    const policies = await mapInOrder(p.policyIds, (id, index) =>
      findPolicy(ctx.tx, ctx.organization.id, id, `parameters.policyIds[${index}]`),
    )
    for (const policy of policies) await ctx.tx.delete('policies', policy.id)
    return { policyIds: p.policyIds }
  },
})
