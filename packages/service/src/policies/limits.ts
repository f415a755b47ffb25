/**
 * Bounds of the policy language. A policy over a limit is refused when it is created (syntax
 * limits) or stops with OUTCOME_ERROR when it is evaluated (step limit), so a hostile expression
 * can neither stall nor crash the service.
 */
export const POLICY_LIMITS = {
  /** Characters of one `condition` or `consensus`. */
  maxExpressionLength: 4096,
  /** Nesting of brackets, unary operators and method calls in one expression. */
  maxDepth: 32,
  /** Items of one list literal (`x in [..]`). */
  maxListLiteral: 256,
  /** Nodes visited (and list items compared) while evaluating one expression. */
  maxSteps: 20_000,
  /**
   * Steps of all the policies of one decision together: past it, the policies not evaluated yet
   * get OUTCOME_ERROR, so 1,000 costly policies cannot hold the service for seconds.
   */
  maxStepsPerDecision: 400_000,
  /**
   * Characters of all the expressions (`condition` and `consensus`) of one organization's
   * policies together. Parsing is not counted in steps, and a process-wide cache of parsed trees
   * can be churned by organizations taking turns (an end user holds several), so an activity may
   * parse all its organization's policies again: at the parser's 15,000 to 35,000 characters a
   * millisecond for ordinary expressions (7,000 for its worst shape, lists of 256 items), this many
   * cost about what a decision spending `maxStepsPerDecision` costs (15 to 30 ms; 1.4 times that at
   * the worst).
   * Refused at `create_policy`, `create_policies` and `update_policy` (412 RESOURCE_LIMIT_REACHED);
   * an organization holding more from before keeps them but cannot add.
   */
  maxExpressionCharactersPerOrganization: 200_000,
  /** Digits of an integer literal (u256 has 78). */
  maxIntegerDigits: 78,
} as const
