import type { PolicyParams } from '@latchkey/protocol'
import { type ActivityContext, defineActivity } from '../kernel/registry.ts'
import { checkPolicyRoom, expressionCharacters, readPolicyParams } from '../policies/readPolicyParams.ts'

/** Stores one policy (its expressions were parsed when the request was read). */
export async function storePolicy(
  ctx: ActivityContext,
  params: PolicyParams,
  field: string,
): Promise<string> {
  await checkPolicyRoom(ctx.tx, {
    organizationId: ctx.organization.id,
    name: { value: params.policyName, field: `${field}.policyName` },
    characters: {
      count: expressionCharacters(params),
      field: `${field}.${params.condition ? 'condition' : 'consensus'}`,
    },
  })
  const id = ctx.newId()
  await ctx.tx.put('policies', {
    id,
    organizationId: ctx.organization.id,
    name: params.policyName,
    effect: params.effect,
    condition: params.condition ?? '',
    consensus: params.consensus ?? '',
    notes: params.notes,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  })
  return id
}

/** A policy of the organization (ACTIVITY_TYPE_CREATE_POLICY_V3). */
export const createPolicy = defineActivity('create_policy', {
  parse: (r) => readPolicyParams(r.value, r.path),
  run: async (ctx, p) => ({ policyId: await storePolicy(ctx, p, 'parameters') }),
})
