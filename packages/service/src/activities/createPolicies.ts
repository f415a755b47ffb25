import { mapInOrder } from '../kernel/base/async.ts'
import { defineActivity } from '../kernel/registry.ts'
import { readPolicyParams } from '../policies/readPolicyParams.ts'
import { storePolicy } from './createPolicy.ts'

/** Several policies at once: all are stored or none. */
export const createPolicies = defineActivity('create_policies', {
  parse: (r) => ({ policies: r.array('policies', readPolicyParams, { min: 1, max: 100 }) }),
  run: async (ctx, p) => ({
    policyIds: await mapInOrder(p.policies, (policy, index) =>
      storePolicy(ctx, policy, `parameters.policies[${index}]`),
    ),
  }),
})
