import type { CompareOp, Expr, LambdaMethod } from './ast.ts'
import { canonicalAddress } from './canonicalAddress.ts'
import { POLICY_LIMITS } from './limits.ts'
import { PolicySyntaxError } from './PolicySyntaxError.ts'
import { type Token, tokenize } from './tokenize.ts'

/** Keywords a `condition` may read. */
export const CONDITION_KEYWORDS = ['activity', 'wallet', 'wallet_account', 'eth', 'solana'] as const
/** Keywords a `consensus` may read. */
export const CONSENSUS_KEYWORDS = ['approvers', 'credentials'] as const

const COMPARE_OPS = new Set(['==', '!=', '<', '>', '<=', '>='])
const LAMBDA_METHODS = new Set(['all', 'any', 'filter'])
const RESERVED = new Set(['true', 'false', 'in'])

/**
 * Parses a policy expression (recursive descent) into a syntax tree, checking every name against
 * `keywords` and the variables of enclosing `.all/.any/.filter`. Precedence, loosest first:
 * `||`, `&&`, comparisons and `in` (which do not chain), `!`, then `.f`, `[i]`, `[a..b]`, `.m(..)`.
 */
export function parsePolicy(source: string, keywords: readonly string[]): Expr {
  const tokens = tokenize(source)
  let at = 0
  let depth = 0
  const scopes: string[] = []

  const peek = (): Token => tokens[at]!
  const next = (): Token => tokens[at++]!
  const isOp = (text: string) => peek().kind === 'op' && peek().text === text
  const describe = (token: Token) =>
    token.kind === 'end' ? 'end of expression' : token.kind === 'string' ? 'a string' : `'${token.text}'`
  const expectOp = (text: string): Token => {
    if (!isOp(text)) throw new PolicySyntaxError(`expected '${text}', found ${describe(peek())}`, peek().pos)
    return next()
  }
  const enter = (pos: number) => {
    if (++depth > POLICY_LIMITS.maxDepth)
      throw new PolicySyntaxError(`expression nests deeper than ${POLICY_LIMITS.maxDepth} levels`, pos)
  }

  function expression(): Expr {
    enter(peek().pos)
    const result = logical('||', () => logical('&&', comparison))
    depth--
    return result
  }

  function logical(op: '&&' | '||', operand: () => Expr): Expr {
    const first = operand()
    if (!isOp(op)) return first
    const operands = [first]
    while (isOp(op)) {
      next()
      operands.push(operand())
    }
    return { type: 'logical', op, operands, pos: first.pos }
  }

  function comparison(): Expr {
    const left = unary()
    const token = peek()
    let result: Expr
    if (token.kind === 'op' && COMPARE_OPS.has(token.text)) {
      next()
      result = { type: 'compare', op: token.text as CompareOp, left, right: unary(), pos: token.pos }
    } else if (token.kind === 'ident' && token.text === 'in') {
      next()
      result = { type: 'in', left, right: unary(), pos: token.pos }
    } else return left
    const after = peek()
    if (
      (after.kind === 'op' && COMPARE_OPS.has(after.text)) ||
      (after.kind === 'ident' && after.text === 'in')
    )
      throw new PolicySyntaxError(`comparisons do not chain: group them with && or ( )`, after.pos)
    return result
  }

  function unary(): Expr {
    if (isOp('!')) {
      const bang = next()
      enter(bang.pos)
      const operand = unary()
      depth--
      return { type: 'not', operand, pos: bang.pos }
    }
    return postfix(primary())
  }

  function postfix(start: Expr): Expr {
    let node = start
    let chain = 0
    for (;;) {
      if (!isOp('.') && !isOp('[')) return node
      if (++chain > POLICY_LIMITS.maxDepth)
        throw new PolicySyntaxError(`more than ${POLICY_LIMITS.maxDepth} accesses in a row`, peek().pos)
      const token = next()
      if (token.text === '[') {
        node = bracket(node, token.pos)
        continue
      }
      const name = next()
      if (name.kind !== 'ident')
        throw new PolicySyntaxError(
          `expected a field or function name after '.', found ${describe(name)}`,
          name.pos,
        )
      if (!isOp('(')) {
        node = { type: 'field', object: node, name: name.text, pos: name.pos }
        continue
      }
      next()
      enter(name.pos)
      node = call(node, name)
      depth--
      expectOp(')')
    }
  }

  function bracket(object: Expr, pos: number): Expr {
    if (isOp('..')) {
      next()
      const end = isOp(']') ? undefined : expression()
      expectOp(']')
      return { type: 'slice', object, ...(end ? { end } : {}), pos }
    }
    const first = expression()
    if (isOp('..')) {
      next()
      const end = isOp(']') ? undefined : expression()
      expectOp(']')
      return { type: 'slice', object, start: first, ...(end ? { end } : {}), pos }
    }
    expectOp(']')
    return { type: 'index', object, index: first, pos }
  }

  function call(object: Expr, name: Token): Expr {
    if (LAMBDA_METHODS.has(name.text)) {
      const variable = next()
      if (variable.kind !== 'ident' || RESERVED.has(variable.text))
        throw new PolicySyntaxError(
          `${name.text}() takes a variable name first, as in ${name.text}(x, <predicate>)`,
          variable.pos,
        )
      expectOp(',')
      scopes.push(variable.text)
      const body = expression()
      scopes.pop()
      return {
        type: 'lambda',
        object,
        method: name.text as LambdaMethod,
        variable: variable.text,
        body,
        pos: name.pos,
      }
    }
    if (name.text === 'count') {
      if (!isOp(')')) throw new PolicySyntaxError('count() takes no arguments', peek().pos)
      return { type: 'call', object, method: 'count', args: [], pos: name.pos }
    }
    if (name.text === 'contains') {
      const arg = expression()
      if (!isOp(')')) throw new PolicySyntaxError('contains() takes one argument', peek().pos)
      return { type: 'call', object, method: 'contains', args: [arg], pos: name.pos }
    }
    throw new PolicySyntaxError(
      `unknown function '${name.text}' (use all, any, filter, contains or count)`,
      name.pos,
    )
  }

  function primary(): Expr {
    const token = next()
    switch (token.kind) {
      case 'int':
        return { type: 'int', value: BigInt(token.text), pos: token.pos }
      // Context values hold addresses in this form too, so a checksummed literal matches.
      case 'string':
        return { type: 'string', value: canonicalAddress(token.text), pos: token.pos }
      case 'ident': {
        if (token.text === 'true' || token.text === 'false')
          return { type: 'bool', value: token.text === 'true', pos: token.pos }
        if (token.text === 'in') throw new PolicySyntaxError(`unexpected 'in'`, token.pos)
        if (!scopes.includes(token.text) && !keywords.includes(token.text))
          throw new PolicySyntaxError(
            `unknown keyword '${token.text}' (this expression may use ${keywords.join(', ')})`,
            token.pos,
          )
        return { type: 'ident', name: token.text, pos: token.pos }
      }
      case 'op':
        if (token.text === '(') {
          const inner = expression()
          expectOp(')')
          return inner
        }
        if (token.text === '[') return list(token.pos)
        throw new PolicySyntaxError(`unexpected '${token.text}'`, token.pos)
      default:
        throw new PolicySyntaxError('unexpected end of expression', token.pos)
    }
  }

  function list(pos: number): Expr {
    const items: Expr[] = []
    if (!isOp(']'))
      for (;;) {
        if (items.length === POLICY_LIMITS.maxListLiteral)
          throw new PolicySyntaxError(`list has more than ${POLICY_LIMITS.maxListLiteral} items`, peek().pos)
        items.push(expression())
        if (!isOp(',')) break
        next()
      }
    expectOp(']')
    return { type: 'list', items, pos }
  }

  if (peek().kind === 'end') throw new PolicySyntaxError('empty expression', 0)
  const tree = expression()
  if (peek().kind !== 'end')
    throw new PolicySyntaxError(`unexpected ${describe(peek())} after a complete expression`, peek().pos)
  return tree
}
