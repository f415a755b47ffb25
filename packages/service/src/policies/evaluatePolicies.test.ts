import { describe, expect, it } from 'vitest'
import { type EvaluatePoliciesInput, evaluatePolicies, type PolicyInput } from './evaluatePolicies.ts'

const TO = '0x1111111111111111111111111111111111111111'
const context = {
  activity: { type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2', resource: 'WALLET', action: 'SIGN' },
  eth: { tx: { to: TO, value: 5n } },
}
const admins = [
  { id: 'u1', tags: ['admin'], email: '', alias: 'a' },
  { id: 'u2', tags: ['admin'], email: '', alias: 'b' },
]

const input = (
  policies: PolicyInput[],
  over: Partial<EvaluatePoliciesInput> = {},
): EvaluatePoliciesInput => ({
  policies,
  context,
  consensus: { approvers: admins.slice(0, 1), credentials: [] },
  rootQuorumMet: false,
  ...over,
})

const allowTo: PolicyInput = { id: 'p-allow', effect: 'EFFECT_ALLOW', condition: `eth.tx.to == '${TO}'` }
const denyBig: PolicyInput = { id: 'p-deny', effect: 'EFFECT_DENY', condition: 'eth.tx.value > 1' }
const twoAdmins: PolicyInput = {
  id: 'p-consensus',
  effect: 'EFFECT_ALLOW',
  condition: "activity.action == 'SIGN'",
  consensus: "approvers.filter(u, u.tags.contains('admin')).count() >= 2",
}
const broken: PolicyInput = { id: 'p-error', effect: 'EFFECT_DENY', condition: 'eth.tx.gas > 1' }
const other: PolicyInput = {
  id: 'p-other',
  effect: 'EFFECT_ALLOW',
  condition: "activity.resource == 'POLICY'",
}

describe('evaluatePolicies', () => {
  it('denies implicitly when nothing matches, and with no policies at all', () => {
    expect(evaluatePolicies(input([]))).toEqual({ outcome: 'OUTCOME_DENY_IMPLICIT', evaluations: [] })
    expect(evaluatePolicies(input([other]))).toEqual({
      outcome: 'OUTCOME_DENY_IMPLICIT',
      evaluations: [{ policyId: 'p-other', outcome: 'OUTCOME_DENY_IMPLICIT' }],
    })
  })

  it('allows on a matching ALLOW; a missing condition or consensus matches everything', () => {
    expect(evaluatePolicies(input([allowTo, other]))).toEqual({
      outcome: 'OUTCOME_ALLOW',
      evaluations: [
        { policyId: 'p-allow', outcome: 'OUTCOME_ALLOW' },
        { policyId: 'p-other', outcome: 'OUTCOME_DENY_IMPLICIT' },
      ],
    })
    expect(evaluatePolicies(input([{ id: 'p-all', effect: 'EFFECT_ALLOW', condition: ' ' }])).outcome).toBe(
      'OUTCOME_ALLOW',
    )
  })

  it('lets a matching DENY win over a matching ALLOW', () => {
    expect(evaluatePolicies(input([allowTo, denyBig]))).toEqual({
      outcome: 'OUTCOME_DENY_EXPLICIT',
      evaluations: [
        { policyId: 'p-allow', outcome: 'OUTCOME_ALLOW' },
        { policyId: 'p-deny', outcome: 'OUTCOME_DENY_EXPLICIT' },
      ],
    })
  })

  it('waits for consensus until two tagged approvers approved', () => {
    expect(evaluatePolicies(input([twoAdmins]))).toEqual({
      outcome: 'OUTCOME_REQUIRES_CONSENSUS',
      evaluations: [{ policyId: 'p-consensus', outcome: 'OUTCOME_REQUIRES_CONSENSUS' }],
    })
    const both = { consensus: { approvers: admins, credentials: [] } }
    expect(evaluatePolicies(input([twoAdmins], both)).outcome).toBe('OUTCOME_ALLOW')
    // An ALLOW that is met wins over one still waiting.
    expect(evaluatePolicies(input([twoAdmins, allowTo])).outcome).toBe('OUTCOME_ALLOW')
  })

  it('records OUTCOME_ERROR for a policy that fails and decides on the others', () => {
    expect(evaluatePolicies(input([broken, allowTo]))).toEqual({
      outcome: 'OUTCOME_ALLOW',
      evaluations: [
        { policyId: 'p-error', outcome: 'OUTCOME_ERROR' },
        { policyId: 'p-allow', outcome: 'OUTCOME_ALLOW' },
      ],
    })
    const notBool: PolicyInput = { id: 'p-int', effect: 'EFFECT_ALLOW', condition: 'eth.tx.value' }
    const badSyntax: PolicyInput = { id: 'p-syntax', effect: 'EFFECT_ALLOW', condition: '((' }
    expect(evaluatePolicies(input([notBool, badSyntax])).evaluations.map((e) => e.outcome)).toEqual([
      'OUTCOME_ERROR',
      'OUTCOME_ERROR',
    ])
  })

  it('bounds the cost of all policies of one decision together', () => {
    const approvers = Array.from({ length: 95 }, (_, i) => ({ id: `u${i}`, tags: [], email: '', alias: '' }))
    // Each costs ~18,300 steps (95 x 95 pairs), under the per-expression limit of 20,000.
    const costly: PolicyInput[] = Array.from({ length: 40 }, (_, i) => ({
      id: `p${i}`,
      effect: 'EFFECT_ALLOW',
      consensus: 'approvers.all(a, approvers.all(b, true))',
    }))
    const result = evaluatePolicies(input(costly, { consensus: { approvers, credentials: [] } }))
    const outcomes = result.evaluations.map((evaluation) => evaluation.outcome)
    // The first ones fit in the decision's budget of 400,000 steps; the rest are cut off.
    expect(outcomes.slice(0, 20)).toEqual(Array(20).fill('OUTCOME_ALLOW'))
    expect(outcomes.slice(-10)).toEqual(Array(10).fill('OUTCOME_ERROR'))
    expect(result.outcome).toBe('OUTCOME_ALLOW')
  })

  it('allows when the root quorum is met, still recording every policy', () => {
    expect(evaluatePolicies(input([denyBig, broken], { rootQuorumMet: true }))).toEqual({
      outcome: 'OUTCOME_ALLOW',
      evaluations: [
        { policyId: 'p-deny', outcome: 'OUTCOME_DENY_EXPLICIT' },
        { policyId: 'p-error', outcome: 'OUTCOME_ERROR' },
      ],
    })
  })
})
