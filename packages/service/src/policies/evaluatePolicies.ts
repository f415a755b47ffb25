import type { PolicyOutcome } from '@latchkey/protocol'
import type { Expr } from './ast.ts'
import { evaluateExpression, type PolicyScope, type PolicyValue } from './evaluateExpression.ts'
import { POLICY_LIMITS } from './limits.ts'
import { CONDITION_KEYWORDS, CONSENSUS_KEYWORDS, parsePolicy } from './parsePolicy.ts'

export type PolicyEffect = 'EFFECT_ALLOW' | 'EFFECT_DENY'

/** The parts of a stored policy evaluation needs. */
export interface PolicyInput {
  id: string
  effect: PolicyEffect
  /** Absent or empty: the policy applies to every activity. */
  condition?: string
  /** Absent or empty: met by the submitter alone. */
  consensus?: string
}

export interface EvaluatePoliciesInput {
  policies: readonly PolicyInput[]
  /** Keywords of `condition` (`activity`, `wallet`, `eth` ...), from `policyContextOf`. */
  context: PolicyScope
  /** Keywords of `consensus`: `approvers` (the submitter and every approving user) and `credentials`. */
  consensus: { approvers: readonly PolicyValue[]; credentials: readonly PolicyValue[] }
  /** The organization's root quorum approved the activity: policies are recorded but bypassed. */
  rootQuorumMet: boolean
  /**
   * The steps left for the whole decision (`decisionBudget`): one activity evaluated in several
   * scopes (each payload, signer or call of a batch) shares one, so a batch of 100 costs no more
   * than one. Absent: a budget of its own.
   */
  budget?: DecisionBudget
}

/** Steps an activity's policy evaluations may still take, shared by all its scopes. */
export interface DecisionBudget {
  remaining: number
}

/** A fresh budget for one decision (`POLICY_LIMITS.maxStepsPerDecision`). */
export const decisionBudget = (): DecisionBudget => ({ remaining: POLICY_LIMITS.maxStepsPerDecision })

export interface PolicyEvaluationResult {
  outcome: PolicyOutcome
  evaluations: { policyId: string; outcome: PolicyOutcome }[]
}

/** Parsed expressions by source: policies are re-evaluated on every activity and vote. */
const parsed = new Map<string, Expr>()
const PARSED_CACHE_SIZE = 2048

function treeOf(source: string, keywords: readonly string[], kind: string): Expr {
  const key = `${kind}\u0000${source}`
  let tree = parsed.get(key)
  if (!tree) {
    tree = parsePolicy(source, keywords)
    if (parsed.size >= PARSED_CACHE_SIZE) parsed.delete(parsed.keys().next().value!)
    parsed.set(key, tree)
  }
  return tree
}

/** Parses a policy's `condition` (throws PolicySyntaxError). */
export const parseCondition = (source: string): Expr => treeOf(source, CONDITION_KEYWORDS, 'condition')
/** Parses a policy's `consensus` (throws PolicySyntaxError). */
export const parseConsensus = (source: string): Expr => treeOf(source, CONSENSUS_KEYWORDS, 'consensus')

/** true or false; anything else (a runtime error, a non-bool result) is an error. */
function holds(
  source: string | undefined,
  parse: (source: string) => Expr,
  scope: PolicyScope,
  budget: { remaining: number },
): boolean {
  if (source === undefined || source.trim() === '') return true
  const value = evaluateExpression(parse(source), scope, POLICY_LIMITS.maxSteps, budget)
  if (typeof value !== 'boolean') throw new TypeError(`expression gives a ${typeof value}, not a bool`)
  return value
}

/**
 * Evaluates every policy against one activity and combines them:
 * root quorum met → ALLOW (policies still recorded); any matching DENY → DENY_EXPLICIT; any
 * matching ALLOW whose consensus is met → ALLOW; a matching ALLOW waiting for consensus →
 * REQUIRES_CONSENSUS; otherwise DENY_IMPLICIT. A policy that fails to evaluate records
 * OUTCOME_ERROR and takes no part in the decision.
 */
export function evaluatePolicies(input: EvaluatePoliciesInput): PolicyEvaluationResult {
  const consensusScope: PolicyScope = {
    approvers: input.consensus.approvers,
    credentials: input.consensus.credentials,
  }
  const budget = input.budget ?? decisionBudget()
  const evaluations = input.policies.map((policy) => {
    let outcome: PolicyOutcome
    try {
      if (!holds(policy.condition, parseCondition, input.context, budget)) outcome = 'OUTCOME_DENY_IMPLICIT'
      else {
        const met = holds(policy.consensus, parseConsensus, consensusScope, budget)
        if (policy.effect === 'EFFECT_DENY') outcome = met ? 'OUTCOME_DENY_EXPLICIT' : 'OUTCOME_DENY_IMPLICIT'
        else outcome = met ? 'OUTCOME_ALLOW' : 'OUTCOME_REQUIRES_CONSENSUS'
      }
    } catch {
      outcome = 'OUTCOME_ERROR'
    }
    return { policyId: policy.id, outcome }
  })
  const any = (outcome: PolicyOutcome) => evaluations.some((evaluation) => evaluation.outcome === outcome)
  const outcome: PolicyOutcome = input.rootQuorumMet
    ? 'OUTCOME_ALLOW'
    : any('OUTCOME_DENY_EXPLICIT')
      ? 'OUTCOME_DENY_EXPLICIT'
      : any('OUTCOME_ALLOW')
        ? 'OUTCOME_ALLOW'
        : any('OUTCOME_REQUIRES_CONSENSUS')
          ? 'OUTCOME_REQUIRES_CONSENSUS'
          : 'OUTCOME_DENY_IMPLICIT'
  return { outcome, evaluations }
}

/**
 * One decision from the evaluations of one activity in several scopes (each call of a batch): a
 * DENY on any refuses it, it is allowed only when every scope is, and it waits for consensus when
 * every scope is allowed or waits. Each policy's recorded outcome is the strongest it had.
 */
export function combinePolicyResults(results: readonly PolicyEvaluationResult[]): PolicyEvaluationResult {
  if (results.length === 1) return results[0]!
  const outcomes = results.map((result) => result.outcome)
  const outcome: PolicyOutcome = outcomes.includes('OUTCOME_DENY_EXPLICIT')
    ? 'OUTCOME_DENY_EXPLICIT'
    : outcomes.every((o) => o === 'OUTCOME_ALLOW')
      ? 'OUTCOME_ALLOW'
      : outcomes.every((o) => o === 'OUTCOME_ALLOW' || o === 'OUTCOME_REQUIRES_CONSENSUS')
        ? 'OUTCOME_REQUIRES_CONSENSUS'
        : 'OUTCOME_DENY_IMPLICIT'
  const rank: PolicyOutcome[] = [
    'OUTCOME_DENY_EXPLICIT',
    'OUTCOME_ALLOW',
    'OUTCOME_REQUIRES_CONSENSUS',
    'OUTCOME_ERROR',
    'OUTCOME_DENY_IMPLICIT',
  ]
  const evaluations = (results[0]?.evaluations ?? []).map(({ policyId }, index) => {
    const seen = results.map((result) => result.evaluations[index]!.outcome)
    return { policyId, outcome: rank.find((o) => seen.includes(o)) ?? 'OUTCOME_DENY_IMPLICIT' }
  })
  return { outcome, evaluations }
}
