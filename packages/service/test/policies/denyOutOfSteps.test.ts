// A DENY whose evaluation runs out of steps fails closed (test/security/denyOutOfStepsFailsClosed.test.ts
// for the service): its scope is refused unless a DENY matched or the root quorum is met, whether it
// ran out of its own 20,000 steps or of the decision's budget, and the flag is carried wherever its
// outcome is reused (`evaluatePoliciesInScopes`) or combined (`combinePolicyResults`). Its other
// errors (a keyword the activity lacks, a type mismatch) still refuse nothing.
import { describe, expect, it } from 'vitest'
import {
  evaluateExpression,
  type PolicyScope,
  PolicyStepLimitError,
} from '../../src/policies/evaluateExpression.ts'
import {
  combinePolicyResults,
  evaluatePolicies,
  evaluatePoliciesInScopes,
  type PolicyInput,
  parseCondition,
} from '../../src/policies/evaluatePolicies.ts'
import { POLICY_LIMITS } from '../../src/policies/limits.ts'

const BAD = 'bad'
/** `eth.list` holding `junk` items then the denied one. */
const scopeWith = (junk: number, last = BAD): PolicyScope => ({
  activity: { action: 'SIGN' },
  eth: { list: [...Array.from({ length: junk }, (_, i) => `j${i}`), last] },
})
const consensus = { approvers: [{ id: 'u1', tags: [], email: '', alias: '' }], credentials: [] }

const allowAll: PolicyInput = { id: 'allow', effect: 'EFFECT_ALLOW' }
const denyBad: PolicyInput = {
  id: 'deny-bad',
  effect: 'EFFECT_DENY',
  condition: `activity.action == 'SIGN' && eth.list.any(x, x == '${BAD}')`,
}
const denyMissing: PolicyInput = { id: 'deny-missing', effect: 'EFFECT_DENY', condition: 'solana.tx.fee > 1' }
const denyTypes: PolicyInput = { id: 'deny-types', effect: 'EFFECT_DENY', condition: "eth.list == 'x'" }

const judge = (policies: PolicyInput[], context: PolicyScope, rootQuorumMet = false) =>
  evaluatePolicies({ policies, context, consensus, rootQuorumMet })

describe('evaluateExpression out of steps', () => {
  it('throws PolicyStepLimitError naming the limit that stopped it', () => {
    const tree = parseCondition(denyBad.condition!)
    const own = (() => {
      try {
        evaluateExpression(tree, scopeWith(5_000))
      } catch (error) {
        return error
      }
    })()
    expect(own).toBeInstanceOf(PolicyStepLimitError)
    expect((own as PolicyStepLimitError).limit).toBe('maxSteps')
    const shared = (() => {
      try {
        evaluateExpression(tree, scopeWith(100), POLICY_LIMITS.maxSteps, { remaining: 50 })
      } catch (error) {
        return error
      }
    })()
    expect((shared as PolicyStepLimitError).limit).toBe('maxStepsPerDecision')
  })
})

describe('evaluatePolicies with a DENY out of steps', () => {
  it('refuses what the DENY denies within its steps, and what it cannot finish judging', () => {
    expect(judge([allowAll, denyBad], scopeWith(2))).toEqual({
      outcome: 'OUTCOME_DENY_EXPLICIT',
      evaluations: [
        { policyId: 'allow', outcome: 'OUTCOME_ALLOW' },
        { policyId: 'deny-bad', outcome: 'OUTCOME_DENY_EXPLICIT' },
      ],
    })
    expect(judge([allowAll, denyBad], scopeWith(2, 'fine')).outcome).toBe('OUTCOME_ALLOW')
    expect(judge([allowAll, denyBad], scopeWith(5_000))).toEqual({
      outcome: 'OUTCOME_DENY_IMPLICIT',
      evaluations: [
        { policyId: 'allow', outcome: 'OUTCOME_ALLOW' },
        { policyId: 'deny-bad', outcome: 'OUTCOME_ERROR' },
      ],
      deniesOutOfSteps: [{ policyId: 'deny-bad', limit: 'maxSteps' }],
    })
  })

  it('lets a DENY that matched decide, and the root quorum allow', () => {
    const matches: PolicyInput = {
      id: 'deny-sign',
      effect: 'EFFECT_DENY',
      condition: "activity.action == 'SIGN'",
    }
    expect(judge([allowAll, denyBad, matches], scopeWith(5_000)).outcome).toBe('OUTCOME_DENY_EXPLICIT')
    expect(judge([allowAll, denyBad], scopeWith(5_000), true).outcome).toBe('OUTCOME_ALLOW')
  })

  it('fails closed on the decision budget too', () => {
    const result = evaluatePolicies({
      policies: [allowAll, denyBad],
      context: scopeWith(100),
      consensus,
      rootQuorumMet: false,
      budget: { remaining: 50 },
    })
    expect(result.outcome).toBe('OUTCOME_DENY_IMPLICIT')
    expect(result.deniesOutOfSteps).toEqual([{ policyId: 'deny-bad', limit: 'maxStepsPerDecision' }])
  })

  it('leaves its other errors refusing nothing, and an ALLOW out of steps allowing nothing', () => {
    expect(judge([allowAll, denyMissing, denyTypes], scopeWith(2))).toEqual({
      outcome: 'OUTCOME_ALLOW',
      evaluations: [
        { policyId: 'allow', outcome: 'OUTCOME_ALLOW' },
        { policyId: 'deny-missing', outcome: 'OUTCOME_ERROR' },
        { policyId: 'deny-types', outcome: 'OUTCOME_ERROR' },
      ],
    })
    const allowBad: PolicyInput = { ...denyBad, id: 'allow-bad', effect: 'EFFECT_ALLOW' }
    expect(judge([allowBad], scopeWith(2)).outcome).toBe('OUTCOME_ALLOW')
    expect(judge([allowBad], scopeWith(5_000))).toEqual({
      outcome: 'OUTCOME_DENY_IMPLICIT',
      evaluations: [{ policyId: 'allow-bad', outcome: 'OUTCOME_ERROR' }],
    })
  })
})

describe('evaluatePoliciesInScopes with a DENY out of steps', () => {
  it('carries the flag into every scope the outcome is reused in, and through combinePolicyResults', () => {
    const eth = scopeWith(5_000).eth
    // Three scopes (accounts of one wallet) sharing `eth`: the DENY is evaluated once, in the first.
    const contexts = ['a1', 'a2', 'a3'].map((address) => ({
      activity: { action: 'SIGN' },
      wallet_account: { address },
      eth,
    }))
    const together = evaluatePoliciesInScopes({
      policies: [allowAll, denyBad],
      contexts,
      consensus,
      rootQuorumMet: false,
    })
    expect(together).toEqual(contexts.map((context) => judge([allowAll, denyBad], context)))
    expect(together.map((result) => result.deniesOutOfSteps)).toEqual(
      Array(3).fill([{ policyId: 'deny-bad', limit: 'maxSteps' }]),
    )
    // One scope out of steps among scopes that allow: the activity is refused.
    const mixed = [
      judge([allowAll, denyBad], scopeWith(2, 'fine')),
      judge([allowAll, denyBad], scopeWith(5_000)),
    ]
    expect(combinePolicyResults(mixed)).toEqual({
      outcome: 'OUTCOME_DENY_IMPLICIT',
      evaluations: [
        { policyId: 'allow', outcome: 'OUTCOME_ALLOW' },
        { policyId: 'deny-bad', outcome: 'OUTCOME_ERROR' },
      ],
      deniesOutOfSteps: [{ policyId: 'deny-bad', limit: 'maxSteps' }],
    })
  })
})
