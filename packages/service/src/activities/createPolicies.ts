import { readPolicyParams } from '../policies/readPolicyParams.ts'
import { defineActivity } from '../registry.ts'
import { storePolicy } from './createPolicy.ts'

/** Several policies at once: all are stored or none. */
export const createPolicies = defineActivity('create_policies', {
  parse: (r) => ({ policies: r.array('policies', readPolicyParams, { min: 1, max: 100 }) }),
  run: (ctx, p) => ({
    policyIds: p.policies.map((policy, index) => storePolicy(ctx, policy, `parameters.policies[${index}]`)),
  }),
})
