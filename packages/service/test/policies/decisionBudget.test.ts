// One activity's policy evaluations share one step budget (POLICY_LIMITS.maxStepsPerDecision),
// however many scopes it is evaluated in: each payload of sign_raw_payloads, each signer, each
// deleted wallet and each call of a batch is a scope. With a budget per scope, an end user (root
// of their own sub-organization) who stored costly policies once made each batch of 100 payloads
// run 100 decisions' worth of steps on the service's thread, holding every other tenant up for
// seconds. The costly policies read `eth.eip_712`, which differs from payload to payload: a policy
// reading nothing that differs between the scopes is evaluated once for all of them
// (`evaluatePoliciesInScopes`), and would not spend the budget here.
import { describe, expect, it } from 'vitest'
import { POLICY_LIMITS } from '../../src/policies/limits.ts'
import { createHarness, ETHEREUM_ACCOUNT, resultOf } from '../../src/testing/harness.ts'
import { permit } from './typedData.ts'

const list = `[${Array.from({ length: 150 }, () => '0').join(',')}]`
/**
 * Spends the whole per-expression budget (20,000 steps), then stops with OUTCOME_ERROR, in each
 * payload's scope (it reads the payload's `eth.eip_712`).
 */
const COSTLY = `eth.eip_712.primary_type != '' && ${list}.all(a, ${list}.all(b, a == b))`
/** Costly policies that leave one expression's steps of the decision's budget. */
const COSTLY_POLICIES = POLICY_LIMITS.maxStepsPerDecision / POLICY_LIMITS.maxSteps - 1

describe('the policy step budget of one decision', () => {
  it('is shared by every payload of a batch, so a batch costs no more steps than one payload', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({
      users: 2,
      wallet: { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] },
    })
    const as = { as: sub.keys[0]!, organizationId: sub.organizationId }
    resultOf(
      'create_policies',
      await h.submit(
        'create_policies',
        {
          policies: [
            ...Array.from({ length: COSTLY_POLICIES }, (_, i) => ({
              policyName: `costly ${i}`,
              effect: 'EFFECT_ALLOW',
              condition: COSTLY,
            })),
            { policyName: 'signing', effect: 'EFFECT_ALLOW', condition: "activity.resource == 'WALLET'" },
          ],
        },
        as,
      ),
    )
    // A root quorum of both users: one user's activity is decided by the policies alone.
    resultOf(
      'update_root_quorum',
      await h.submit('update_root_quorum', { threshold: 2, userIds: sub.userIds }, as),
    )
    const sign = (payloads: number) =>
      h.submit(
        'sign_raw_payloads',
        {
          signWith: sub.addresses![0],
          payloads: Array.from({ length: payloads }, (_, i) => JSON.stringify(permit(String(i + 1)))),
          encoding: 'PAYLOAD_ENCODING_EIP712',
          hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
        },
        as,
      )
    // Control: one payload is evaluated in one scope, and the cheap ALLOW has the steps it needs.
    const one = await sign(1)
    expect(one.body.activity?.status, JSON.stringify(one.body)).toBe('ACTIVITY_STATUS_COMPLETED')
    // A hundred payloads: the costly policies spent the decision's budget in the first scopes, so
    // the policies get OUTCOME_ERROR in the others: no policy allows the batch, which waits for
    // the root quorum instead of being evaluated 100 times over and signed.
    const many = await sign(100)
    expect(many.status).toBe(200)
    expect(many.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const evaluations = await h.query(
      'get_policy_evaluations',
      { organizationId: sub.organizationId, activityId: many.body.activity.id },
      { as: sub.keys[0]! },
    )
    expect(JSON.stringify(evaluations.body)).toContain('OUTCOME_ERROR')
  })
})
