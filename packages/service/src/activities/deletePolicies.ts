import { defineActivity } from '../registry.ts'
import { findPolicy } from './updatePolicy.ts'

/** Deletes several policies: all of them or, when one is unknown, none. */
export const deletePolicies = defineActivity('delete_policies', {
  parse: (r) => ({ policyIds: r.ids('policyIds', { min: 1 }) }),
  run: (ctx, p) => {
    const policies = p.policyIds.map((id, index) =>
      findPolicy(ctx.tx, ctx.organization.id, id, `parameters.policyIds[${index}]`),
    )
    for (const policy of policies) ctx.tx.delete('policies', policy.id)
    return { policyIds: p.policyIds }
  },
})
