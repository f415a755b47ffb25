import type { PolicyOutcome } from '@latchkey/protocol'
import type { Expr } from './ast.ts'
import {
  evaluateExpression,
  type PolicyScope,
  PolicyStepLimitError,
  type PolicyValue,
} from './evaluateExpression.ts'
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
  /**
   * The DENY policies whose evaluation stopped for want of steps (recorded as OUTCOME_ERROR), and
   * which limit stopped it; absent when none did. Such a DENY fails closed: its scope is refused
   * (OUTCOME_DENY_IMPLICIT) unless a DENY matched or the root quorum is met (`combineEvaluations`).
   */
  deniesOutOfSteps?: DenyOutOfSteps[]
}

/** A DENY policy whose evaluation ran out of steps: its own (`maxSteps`) or the decision's. */
export interface DenyOutOfSteps {
  policyId: string
  limit: PolicyStepLimitError['limit']
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
 * One policy's outcome in one scope (`evaluatePolicies`); throws nothing. `outOfSteps`: it failed
 * (OUTCOME_ERROR) for want of steps, and which limit stopped it.
 */
function evaluatePolicy(
  policy: PolicyInput,
  context: PolicyScope,
  consensusScope: PolicyScope,
  budget: DecisionBudget,
): PolicyJudged {
  try {
    if (!holds(policy.condition, parseCondition, context, budget)) return { outcome: 'OUTCOME_DENY_IMPLICIT' }
    const met = holds(policy.consensus, parseConsensus, consensusScope, budget)
    if (policy.effect === 'EFFECT_DENY')
      return { outcome: met ? 'OUTCOME_DENY_EXPLICIT' : 'OUTCOME_DENY_IMPLICIT' }
    return { outcome: met ? 'OUTCOME_ALLOW' : 'OUTCOME_REQUIRES_CONSENSUS' }
  } catch (error) {
    return error instanceof PolicyStepLimitError
      ? { outcome: 'OUTCOME_ERROR', outOfSteps: error.limit }
      : { outcome: 'OUTCOME_ERROR' }
  }
}

type PolicyJudged = { outcome: PolicyOutcome; outOfSteps?: DenyOutOfSteps['limit'] }

/**
 * One scope's result from its policies' (`evaluatePolicies`). A DENY that ran out of steps
 * (`deniesOutOfSteps`) fails closed: a list the caller sized (an EIP-712 array, a batch's calls)
 * can run it past its 20,000 steps before it reaches the value it denies, so what it would have
 * said is unknown, and no ALLOW decides over it. Any other error of a DENY (a keyword this activity
 * lacks, a type mismatch, an index past a value's end) refuses nothing; an item of a caller-filled
 * list that errors no longer hides another that matches (`any`, `all`, `||` and `&&` follow CEL:
 * `evaluateExpression`).
 */
function scopeResult(
  policies: readonly PolicyInput[],
  judged: readonly PolicyJudged[],
  rootQuorumMet: boolean,
): PolicyEvaluationResult {
  const evaluations = judged.map(({ outcome }, index) => ({ policyId: policies[index]!.id, outcome }))
  const deniesOutOfSteps = judged.flatMap(({ outOfSteps }, index) =>
    outOfSteps && policies[index]!.effect === 'EFFECT_DENY'
      ? [{ policyId: policies[index]!.id, limit: outOfSteps }]
      : [],
  )
  const outcome = combineEvaluations(evaluations, rootQuorumMet, deniesOutOfSteps.length > 0)
  return deniesOutOfSteps.length > 0 ? { outcome, evaluations, deniesOutOfSteps } : { outcome, evaluations }
}

/** One scope's outcome from its policies' (`scopeResult`). */
function combineEvaluations(
  evaluations: readonly { outcome: PolicyOutcome }[],
  rootQuorumMet: boolean,
  denyOutOfSteps: boolean,
): PolicyOutcome {
  const any = (outcome: PolicyOutcome) => evaluations.some((evaluation) => evaluation.outcome === outcome)
  return rootQuorumMet
    ? 'OUTCOME_ALLOW'
    : any('OUTCOME_DENY_EXPLICIT')
      ? 'OUTCOME_DENY_EXPLICIT'
      : denyOutOfSteps
        ? 'OUTCOME_DENY_IMPLICIT'
        : any('OUTCOME_ALLOW')
          ? 'OUTCOME_ALLOW'
          : any('OUTCOME_REQUIRES_CONSENSUS')
            ? 'OUTCOME_REQUIRES_CONSENSUS'
            : 'OUTCOME_DENY_IMPLICIT'
}

/**
 * Evaluates every policy against one activity and combines them:
 * root quorum met → ALLOW (policies still recorded); any matching DENY → DENY_EXPLICIT; any
 * matching ALLOW whose consensus is met → ALLOW; a matching ALLOW waiting for consensus →
 * REQUIRES_CONSENSUS; otherwise DENY_IMPLICIT. A policy that fails to evaluate records
 * OUTCOME_ERROR and takes no part in the decision, except a DENY that ran out of steps: no ALLOW
 * decides over it (`scopeResult`, `deniesOutOfSteps`).
 */
export function evaluatePolicies(input: EvaluatePoliciesInput): PolicyEvaluationResult {
  const consensusScope: PolicyScope = {
    approvers: input.consensus.approvers,
    credentials: input.consensus.credentials,
  }
  const budget = input.budget ?? decisionBudget()
  const judged = input.policies.map((policy) => evaluatePolicy(policy, input.context, consensusScope, budget))
  return scopeResult(input.policies, judged, input.rootQuorumMet)
}

/**
 * The keywords `tree` reads: its names not bound by an enclosing `.all/.any/.filter` (a variable
 * named as a keyword hides it in its predicate, as `evaluateExpression` reads it). An expression's
 * value depends on nothing else of its scope.
 */
export function keywordsRead(tree: Expr): ReadonlySet<string> {
  const kept = keywordsOfTree.get(tree)
  if (kept) return kept
  const found = new Set<string>()
  const walk = (node: Expr, bound: readonly string[]): void => {
    if (node.type === 'ident') {
      if (!bound.includes(node.name)) found.add(node.name)
      return
    }
    if (node.type === 'lambda') {
      walk(node.object, bound)
      walk(node.body, [...bound, node.variable])
      return
    }
    for (const child of childrenOf(node)) walk(child, bound)
  }
  walk(tree, [])
  keywordsOfTree.set(tree, found)
  return found
}
const keywordsOfTree = new WeakMap<Expr, ReadonlySet<string>>()

/** The expressions `node` is made of (a lambda's object and body included). */
function childrenOf(node: Expr): readonly Expr[] {
  switch (node.type) {
    case 'bool':
    case 'int':
    case 'string':
    case 'ident':
      return []
    case 'list':
      return node.items
    case 'not':
      return [node.operand]
    case 'logical':
      return node.operands
    case 'compare':
    case 'in':
      return [node.left, node.right]
    case 'field':
      return [node.object]
    case 'index':
      return [node.object, node.index]
    case 'slice':
      return [node.object, ...(node.start ? [node.start] : []), ...(node.end ? [node.end] : [])]
    case 'call':
      return [node.object, ...node.args]
    case 'lambda':
      return [node.object, node.body]
  }
}

/**
 * The keywords of its scope a policy's outcome depends on, sorted; undefined when its condition
 * does not parse (it errors in every scope alike). Its `consensus` reads the approvals, the same
 * in every scope of one decision.
 */
function conditionKeywords(policy: PolicyInput): readonly string[] | undefined {
  if (policy.condition === undefined || policy.condition.trim() === '') return []
  try {
    return [...keywordsRead(parseCondition(policy.condition))].sort()
  } catch {
    return undefined
  }
}

/**
 * `evaluatePolicies` in each of `contexts` (the scopes of one activity: `policyContextsOf`), with
 * one `budget` for all. A policy is evaluated again only in a scope whose keywords it reads
 * (`keywordsRead`) hold other values than in every scope it was evaluated in (the same values:
 * the same primitive, or the same object, as scopes that differ in one keyword share the
 * others); elsewhere its outcome is the one it had there. So a policy not reading
 * `wallet_account` is evaluated once for the 1,000 accounts of an exported wallet, not 1,000
 * times. Within the budget, each scope's result is the one `evaluatePolicies` gives it alone
 * (expressions read nothing but their scope: `evaluateExpression`). Past the budget, a policy
 * not evaluated yet fails (OUTCOME_ERROR), and one evaluated already keeps its outcome. A DENY
 * out of steps is out of steps in every scope its outcome is reused in (`deniesOutOfSteps`).
 */
export function evaluatePoliciesInScopes({
  policies,
  contexts,
  consensus,
  rootQuorumMet,
  budget = decisionBudget(),
}: Omit<EvaluatePoliciesInput, 'context'> & { contexts: readonly PolicyScope[] }): PolicyEvaluationResult[] {
  const consensusScope: PolicyScope = { approvers: consensus.approvers, credentials: consensus.credentials }
  // Per policy: its outcomes by the values of the keywords it reads, one map level per keyword.
  const memos = policies.map((policy) => ({
    keywords: conditionKeywords(policy) ?? [],
    outcomes: new Map<unknown, unknown>(),
  }))
  return contexts.map((context) => {
    const judged = policies.map((policy, index) => {
      const { keywords, outcomes } = memos[index]!
      let level = outcomes
      for (const keyword of keywords.slice(0, -1)) {
        const value = Object.hasOwn(context, keyword) ? context[keyword] : undefined
        let next = level.get(value) as Map<unknown, unknown> | undefined
        if (!next) {
          next = new Map()
          level.set(value, next)
        }
        level = next
      }
      const last = keywords.at(-1)
      const key = last === undefined ? undefined : Object.hasOwn(context, last) ? context[last] : undefined
      let outcome = level.get(key) as PolicyJudged | undefined
      if (outcome === undefined) {
        outcome = evaluatePolicy(policy, context, consensusScope, budget)
        level.set(key, outcome)
      }
      return outcome
    })
    return scopeResult(policies, judged, rootQuorumMet)
  })
}

/** Whether `budget` ran out: a policy evaluated with it failed for want of steps. */
export const budgetSpent = (budget: DecisionBudget): boolean => budget.remaining < 0

/**
 * One decision from the evaluations of one activity in several scopes (each call of a batch): a
 * DENY on any refuses it, it is allowed only when every scope is, and it waits for consensus when
 * every scope is allowed or waits. Each policy's recorded outcome is the strongest it had; the
 * DENYs out of steps are those of every scope.
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
  const deniesOutOfSteps = [
    ...new Map(
      results.flatMap((result) => result.deniesOutOfSteps ?? []).map((deny) => [deny.policyId, deny]),
    ).values(),
  ]
  return deniesOutOfSteps.length > 0 ? { outcome, evaluations, deniesOutOfSteps } : { outcome, evaluations }
}
