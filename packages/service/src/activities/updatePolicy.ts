import { NotFoundError } from '../kernel/base/errors.ts'
import { defineActivity } from '../kernel/registry.ts'
import type { Reads } from '../kernel/store/Store.ts'
import {
  checkPolicyRoom,
  expressionCharacters,
  POLICY_EFFECTS,
  readExpression,
} from '../policies/readPolicyParams.ts'

export async function findPolicy(reads: Reads, organizationId: string, policyId: string, field: string) {
  const policy = await reads.get('policies', policyId)
  if (!policy || policy.organizationId !== organizationId)
    throw new NotFoundError({
      code: 'POLICY_NOT_FOUND',
      field,
      message: `policy ${policyId} not found in organization ${organizationId}`,
    })
  return policy
}

/** Changes the given fields of a policy (ACTIVITY_TYPE_UPDATE_POLICY_V2); '' clears an expression. */
export const updatePolicy = defineActivity('update_policy', {
  parse: (r) => {
    const policyName = r.optString('policyName', { max: 256 })
    const policyEffect = r.optEnum('policyEffect', POLICY_EFFECTS)
    const policyCondition = readExpression(r, 'policyCondition', 'condition')
    const policyConsensus = readExpression(r, 'policyConsensus', 'consensus')
    const policyNotes = r.optString('policyNotes', { min: 0, max: 4096 })
    return {
      policyId: r.string('policyId', { max: 200 }),
      ...(policyName !== undefined ? { policyName } : {}),
      ...(policyEffect !== undefined ? { policyEffect } : {}),
      ...(policyCondition !== undefined ? { policyCondition } : {}),
      ...(policyConsensus !== undefined ? { policyConsensus } : {}),
      ...(policyNotes !== undefined ? { policyNotes } : {}),
    }
  },
  run: async (ctx, p) => {
    const policy = await findPolicy(ctx.tx, ctx.organization.id, p.policyId, 'parameters.policyId')
    const condition = p.policyCondition ?? policy.condition
    const consensus = p.policyConsensus ?? policy.consensus
    const expressionsChanged = p.policyCondition !== undefined || p.policyConsensus !== undefined
    if (p.policyName !== undefined || expressionsChanged)
      await checkPolicyRoom(ctx.tx, {
        organizationId: ctx.organization.id,
        exceptId: policy.id,
        ...(p.policyName !== undefined
          ? { name: { value: p.policyName, field: 'parameters.policyName' } }
          : {}),
        ...(expressionsChanged
          ? {
              characters: {
                count: expressionCharacters({ condition, consensus }),
                field: `parameters.${p.policyCondition !== undefined ? 'policyCondition' : 'policyConsensus'}`,
              },
            }
          : {}),
      })
    await ctx.tx.put('policies', {
      ...policy,
      name: p.policyName ?? policy.name,
      effect: p.policyEffect ?? policy.effect,
      condition,
      consensus,
      notes: p.policyNotes ?? policy.notes,
      updatedAt: ctx.now,
    })
    return { policyId: policy.id }
  },
})
