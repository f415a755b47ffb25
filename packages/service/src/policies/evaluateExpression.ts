import { ServiceError } from '../kernel/base/errors.ts'
import type { Expr } from './ast.ts'
import { POLICY_LIMITS } from './limits.ts'

/** A value of the policy language: bool, int (any size, bigint), string, list or struct. */
export type PolicyValue = boolean | bigint | string | readonly PolicyValue[] | PolicyStruct
export interface PolicyStruct {
  readonly [field: string]: PolicyValue
}

/** What an expression reads: its keywords (`activity`, `eth`, `approvers` ...) by name. */
export type PolicyScope = Readonly<Record<string, PolicyValue | undefined>>

/** A policy that parsed but cannot be evaluated here (missing field, type mismatch, step limit). */
export class PolicyRuntimeError extends ServiceError {
  override name = 'PolicyRuntimeError'
  readonly position: number

  constructor(reason: string, position: number) {
    super(`${reason} at position ${position}`)
    this.position = position
  }
}

/**
 * An evaluation stopped for want of steps: its own (`limit: 'maxSteps'`, `POLICY_LIMITS.maxSteps`)
 * or the decision's (`'maxStepsPerDecision'`, the shared `budget`). Unlike the other runtime errors
 * it can come of values the caller chose (a list it sized), so a DENY stopped by it fails closed
 * (`evaluatePolicies`: `denyOutOfSteps`).
 */
export class PolicyStepLimitError extends PolicyRuntimeError {
  override name = 'PolicyStepLimitError'
  readonly limit: 'maxSteps' | 'maxStepsPerDecision'

  constructor(reason: string, position: number, limit: 'maxSteps' | 'maxStepsPerDecision') {
    super(reason, position)
    this.limit = limit
  }
}

export const typeOf = (value: PolicyValue): string =>
  typeof value === 'boolean'
    ? 'bool'
    : typeof value === 'bigint'
      ? 'int'
      : typeof value === 'string'
        ? 'string'
        : Array.isArray(value)
          ? 'list'
          : 'struct'

const isStruct = (value: PolicyValue): value is PolicyStruct =>
  typeof value === 'object' && !Array.isArray(value)

/**
 * Evaluates a parsed expression over `scope`. Ints compare exactly at any size; `&&`/`||` short-
 * circuit (so `activity.type == 'X' && eth.tx.to == ..` never reads `eth` for other activities).
 * `&&`, `||`, `all` and `any` follow CEL: an operand or item that fails (a missing field, an index
 * out of range) does not hide another that decides (a false one for `&&`/`all`, a true one for
 * `||`/`any`), so a DENY's `any` over a list the caller fills finds the denied item after a junk
 * one; only when none decides is the error thrown. Every node and every list item compared costs
 * a step, and more than `maxSteps` steps stop it (`PolicyStepLimitError`, never outweighed).
 */
export function evaluateExpression(
  tree: Expr,
  scope: PolicyScope,
  maxSteps: number = POLICY_LIMITS.maxSteps,
  /** A budget shared with other evaluations (one decision's policies); decremented as steps are spent. */
  budget?: { remaining: number },
): PolicyValue {
  let steps = 0
  const spend = (pos: number, count = 1) => {
    steps += count
    if (steps > maxSteps)
      throw new PolicyStepLimitError(`evaluation exceeded ${maxSteps} steps`, pos, 'maxSteps')
    if (!budget) return
    budget.remaining -= count
    if (budget.remaining < 0)
      throw new PolicyStepLimitError(
        'the policies of this activity exceeded their evaluation budget',
        pos,
        'maxStepsPerDecision',
      )
  }

  const equal = (a: PolicyValue, b: PolicyValue, pos: number): boolean => {
    spend(pos)
    const ta = typeOf(a)
    if (ta !== typeOf(b)) throw new PolicyRuntimeError(`cannot compare ${ta} with ${typeOf(b)}`, pos)
    if (Array.isArray(a)) {
      const bl = b as readonly PolicyValue[]
      return a.length === bl.length && a.every((item, i) => equal(item, bl[i]!, pos))
    }
    if (isStruct(a)) {
      const bs = b as PolicyStruct
      const keys = Object.keys(a)
      return (
        keys.length === Object.keys(bs).length &&
        keys.every((key) => Object.hasOwn(bs, key) && equal(a[key]!, bs[key]!, pos))
      )
    }
    return a === b
  }

  const expect = <T extends PolicyValue>(value: PolicyValue, type: string, pos: number, what: string): T => {
    if (typeOf(value) !== type)
      throw new PolicyRuntimeError(`${what} must be ${type}, got ${typeOf(value)}`, pos)
    return value as T
  }

  const position = (value: PolicyValue, length: number, pos: number, allowEnd: boolean): number => {
    const index = expect<bigint>(value, 'int', pos, 'an index')
    if (index < 0n || index > BigInt(allowEnd ? length : length - 1))
      throw new PolicyRuntimeError(`index ${index} is out of range (length ${length})`, pos)
    return Number(index)
  }

  const asList = (value: PolicyValue, pos: number, method: string): readonly PolicyValue[] => {
    if (!Array.isArray(value))
      throw new PolicyRuntimeError(`${method}() needs a list, got ${typeOf(value)}`, pos)
    spend(pos, value.length)
    return value
  }

  /**
   * `||` and `any` (`decisive` true), `&&` and `all` (false), as CEL has them: the first of `items`
   * whose `test` gives `decisive` decides, even if one before it failed; the items after it are
   * not tested. With none deciding, the first failure is thrown, else the other value. Running out
   * of steps is thrown at once: what the items not reached would give is unknown.
   */
  const decide = <T>(items: readonly T[], decisive: boolean, test: (item: T) => boolean): boolean => {
    let failure: PolicyRuntimeError | undefined
    for (const item of items) {
      try {
        if (test(item) === decisive) return decisive
      } catch (error) {
        if (!(error instanceof PolicyRuntimeError) || error instanceof PolicyStepLimitError) throw error
        failure ??= error
      }
    }
    if (failure) throw failure
    return !decisive
  }

  const run = (node: Expr, vars: ReadonlyMap<string, PolicyValue>): PolicyValue => {
    spend(node.pos)
    switch (node.type) {
      case 'bool':
      case 'int':
      case 'string':
        return node.value
      case 'list':
        return node.items.map((item) => run(item, vars))
      case 'ident': {
        const value = vars.get(node.name) ?? (Object.hasOwn(scope, node.name) ? scope[node.name] : undefined)
        if (value === undefined)
          throw new PolicyRuntimeError(`'${node.name}' is not available for this activity`, node.pos)
        return value
      }
      case 'not':
        return !expect<boolean>(run(node.operand, vars), 'bool', node.pos, 'the operand of !')
      case 'logical':
        return decide(node.operands, node.op === '||', (operand) =>
          expect<boolean>(run(operand, vars), 'bool', operand.pos, `an operand of ${node.op}`),
        )
      case 'compare': {
        const left = run(node.left, vars)
        const right = run(node.right, vars)
        if (node.op === '==') return equal(left, right, node.pos)
        if (node.op === '!=') return !equal(left, right, node.pos)
        const type = typeOf(left)
        if ((type !== 'int' && type !== 'string') || typeOf(right) !== type)
          throw new PolicyRuntimeError(`cannot order ${type} and ${typeOf(right)} with ${node.op}`, node.pos)
        const a = left as bigint | string
        const b = right as bigint | string
        return node.op === '<' ? a < b : node.op === '>' ? a > b : node.op === '<=' ? a <= b : a >= b
      }
      case 'in': {
        const left = run(node.left, vars)
        const list = asList(run(node.right, vars), node.pos, 'in')
        return list.some((item) => equal(left, item, node.pos))
      }
      case 'field': {
        const object = run(node.object, vars)
        if (!isStruct(object))
          throw new PolicyRuntimeError(`cannot read field '${node.name}' of ${typeOf(object)}`, node.pos)
        if (!Object.hasOwn(object, node.name))
          throw new PolicyRuntimeError(`no field '${node.name}' here`, node.pos)
        return object[node.name]!
      }
      case 'index': {
        const object = run(node.object, vars)
        const index = run(node.index, vars)
        if (isStruct(object)) {
          const key = expect<string>(index, 'string', node.pos, 'a map key')
          if (!Object.hasOwn(object, key)) throw new PolicyRuntimeError(`no key '${key}' here`, node.pos)
          return object[key]!
        }
        if (typeof object === 'string') return object[position(index, object.length, node.pos, false)]!
        if (Array.isArray(object)) return object[position(index, object.length, node.pos, false)]!
        throw new PolicyRuntimeError(`cannot index ${typeOf(object)}`, node.pos)
      }
      case 'slice': {
        const object = run(node.object, vars)
        if (typeof object !== 'string' && !Array.isArray(object))
          throw new PolicyRuntimeError(`cannot slice ${typeOf(object)}`, node.pos)
        const length = object.length
        const start = node.start ? position(run(node.start, vars), length, node.pos, true) : 0
        const end = node.end ? position(run(node.end, vars), length, node.pos, true) : length
        if (start > end)
          throw new PolicyRuntimeError(`slice start ${start} is after its end ${end}`, node.pos)
        spend(node.pos, end - start)
        return object.slice(start, end)
      }
      case 'call': {
        const object = run(node.object, vars)
        if (node.method === 'count') {
          if (typeof object === 'string') return BigInt(object.length)
          return BigInt(asList(object, node.pos, 'count').length)
        }
        const needle = run(node.args[0]!, vars)
        if (typeof object === 'string')
          return object.includes(expect<string>(needle, 'string', node.pos, 'the argument of contains'))
        return asList(object, node.pos, 'contains').some((item) => equal(item, needle, node.pos))
      }
      case 'lambda': {
        const list = asList(run(node.object, vars), node.pos, node.method)
        const test = (item: PolicyValue) => {
          const inner = new Map(vars)
          inner.set(node.variable, item)
          return expect<boolean>(
            run(node.body, inner),
            'bool',
            node.body.pos,
            `the predicate of ${node.method}`,
          )
        }
        if (node.method === 'filter') return list.filter(test)
        return decide(list, node.method === 'any', test)
      }
    }
  }

  return run(tree, new Map())
}
