import { defineActivity } from '../kernel/registry.ts'
import { findPolicy } from './updatePolicy.ts'

export const deletePolicy = defineActivity('delete_policy', {
  parse: (r) => ({ policyId: r.string('policyId', { max: 200 }) }),
  run: async (ctx, p) => {
    const policy = await findPolicy(ctx.tx, ctx.organization.id, p.policyId, 'parameters.policyId')
    await ctx.tx.delete('policies', policy.id)
    return { policyId: policy.id }
  },
})
