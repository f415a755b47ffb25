import { describe, expect, it } from 'vitest'
import { POLICY_LIMITS } from './limits.ts'
import { PolicySyntaxError } from './PolicySyntaxError.ts'
import { CONDITION_KEYWORDS, CONSENSUS_KEYWORDS, parsePolicy } from './parsePolicy.ts'

const parse = (source: string) => parsePolicy(source, CONDITION_KEYWORDS)

/** A compact rendering of a tree, fully parenthesised, to assert shape and precedence. */
function show(source: string, keywords: readonly string[] = CONDITION_KEYWORDS): string {
  const render = (node: Awaited<ReturnType<typeof parse>>): string => {
    switch (node.type) {
      case 'bool':
        return String(node.value)
      case 'int':
        return `${node.value}n`
      case 'string':
        return JSON.stringify(node.value)
      case 'list':
        return `[${node.items.map(render).join(', ')}]`
      case 'ident':
        return node.name
      case 'not':
        return `!${render(node.operand)}`
      case 'logical':
        return `(${node.operands.map(render).join(` ${node.op} `)})`
      case 'compare':
        return `(${render(node.left)} ${node.op} ${render(node.right)})`
      case 'in':
        return `(${render(node.left)} in ${render(node.right)})`
      case 'field':
        return `${render(node.object)}.${node.name}`
      case 'index':
        return `${render(node.object)}[${render(node.index)}]`
      case 'slice':
        return `${render(node.object)}[${node.start ? render(node.start) : ''}..${node.end ? render(node.end) : ''}]`
      case 'call':
        return `${render(node.object)}.${node.method}(${node.args.map(render).join(', ')})`
      case 'lambda':
        return `${render(node.object)}.${node.method}(${node.variable} => ${render(node.body)})`
    }
  }
  return render(parsePolicy(source, keywords))
}

function syntaxError(source: string, keywords: readonly string[] = CONDITION_KEYWORDS) {
  try {
    parsePolicy(source, keywords)
  } catch (error) {
    expect(error).toBeInstanceOf(PolicySyntaxError)
    const { position, message } = error as PolicySyntaxError
    return { position, message }
  }
  throw new Error(`expected a syntax error for ${source}`)
}

describe('parsePolicy', () => {
  it('parses every construct', () => {
    expect(show('true')).toBe('true')
    expect(show('12345678901234567890123456789')).toBe('12345678901234567890123456789n')
    expect(show("'a\\'b\\\\c\\n'")).toBe(JSON.stringify("a'b\\c\n"))
    expect(show("eth.tx.to == '0xab'")).toBe('(eth.tx.to == "0xab")')
    expect(show("eth.tx.data[0..10] == '0xa9059cbb'")).toBe('(eth.tx.data[0n..10n] == "0xa9059cbb")')
    expect(show('eth.tx.data[..4]')).toBe('eth.tx.data[..4n]')
    expect(show('eth.tx.data[2..]')).toBe('eth.tx.data[2n..]')
    expect(show('solana.tx.transfers[0].to')).toBe('solana.tx.transfers[0n].to')
    expect(show("eth.eip_712.domain['name']")).toBe('eth.eip_712.domain["name"]')
    expect(show("activity.type in ['A', 'B']")).toBe('(activity.type in ["A", "B"])')
    expect(show('[]')).toBe('[]')
    expect(show('wallet.exported != false')).toBe('(wallet.exported != false)')
    for (const op of ['<', '>', '<=', '>='])
      expect(show(`eth.tx.value ${op} 1`)).toBe(`(eth.tx.value ${op} 1n)`)
    expect(show("approvers.filter(u, u.tags.contains('t')).count() >= 2", CONSENSUS_KEYWORDS)).toBe(
      '(approvers.filter(u => u.tags.contains("t")).count() >= 2n)',
    )
    expect(show("approvers.all(u, u.email != '')", CONSENSUS_KEYWORDS)).toBe(
      'approvers.all(u => (u.email != ""))',
    )
    expect(show('approvers.any(a, credentials.any(c, c.user_id == a.id))', CONSENSUS_KEYWORDS)).toBe(
      'approvers.any(a => credentials.any(c => (c.user_id == a.id)))',
    )
  })

  it('binds || loosest, then &&, comparisons, !, then access', () => {
    expect(show('true || false && false')).toBe('(true || (false && false))')
    expect(show('true && false || true && true')).toBe('((true && false) || (true && true))')
    expect(show("activity.type == 'A' || !wallet.exported && wallet.label in ['x']")).toBe(
      '((activity.type == "A") || (!wallet.exported && (wallet.label in ["x"])))',
    )
  })

  it('keeps precedence through ! and parentheses', () => {
    expect(show('!wallet.exported && true')).toBe('(!wallet.exported && true)')
    expect(show('!(1 == 2)')).toBe('!(1n == 2n)')
    expect(show('(true || false) && false')).toBe('((true || false) && false)')
    expect(show('!!true')).toBe('!!true')
    expect(show('eth.tx.data[1..3].count() > 0')).toBe('(eth.tx.data[1n..3n].count() > 0n)')
  })

  it('reports syntax errors with their 0-based position', () => {
    expect(syntaxError('')).toMatchObject({ position: 0, message: 'empty expression at position 0' })
    expect(syntaxError("eth.tx.to == 'abc")).toMatchObject({
      position: 13,
      message: 'unterminated string at position 13',
    })
    expect(syntaxError('eth.tx.to == "x"')).toMatchObject({ position: 13 })
    expect(syntaxError('eth.tx.to = 1')).toMatchObject({
      position: 10,
      message: "unexpected character '=' at position 10",
    })
    expect(syntaxError('1 == 1 == 1')).toMatchObject({ position: 7 })
    expect(syntaxError('(1 == 1')).toMatchObject({
      position: 7,
      message: "expected ')', found end of expression at position 7",
    })
    expect(syntaxError('foo.bar == 1')).toMatchObject({ position: 0 })
    expect(syntaxError('foo.bar == 1').message).toContain("unknown keyword 'foo'")
    expect(syntaxError('approvers.count() > 1')).toMatchObject({ position: 0 }) // not in a condition
    expect(syntaxError("eth.tx.to.lower() == 'a'")).toMatchObject({ position: 10 })
    expect(syntaxError('activity.type.count(1) == 1')).toMatchObject({ position: 20 })
    expect(syntaxError('approvers.all(1, true)', CONSENSUS_KEYWORDS)).toMatchObject({ position: 14 })
    expect(syntaxError('approvers.all(u, v.id == 1)', CONSENSUS_KEYWORDS)).toMatchObject({ position: 17 })
    expect(syntaxError('true true')).toMatchObject({ position: 5 })
    expect(syntaxError("'a\\q'")).toMatchObject({ position: 2 })
    expect(syntaxError('12ab')).toMatchObject({ position: 0 })
    expect(syntaxError('eth.')).toMatchObject({ position: 4 })
    expect(syntaxError('[1, 2')).toMatchObject({ position: 5 })
  })

  it('refuses hostile expressions at creation', () => {
    const deep = `${'('.repeat(POLICY_LIMITS.maxDepth + 1)}true${')'.repeat(POLICY_LIMITS.maxDepth + 1)}`
    expect(syntaxError(deep).message).toContain('nests deeper than')
    expect(syntaxError(`${'!'.repeat(100)}true`).message).toContain('nests deeper than')
    expect(syntaxError('x'.repeat(POLICY_LIMITS.maxExpressionLength + 1)).message).toContain('the limit is')
    const big = `eth.tx.value in [${Array.from({ length: POLICY_LIMITS.maxListLiteral + 1 }, (_, i) => i).join(',')}]`
    expect(syntaxError(big).message).toContain('more than 256 items')
    expect(syntaxError(`eth${'.a'.repeat(40)}`).message).toContain('accesses in a row')
    expect(syntaxError('1'.repeat(79)).message).toContain('79 digits')
    // Long flat chains are fine: they do not nest.
    expect(() => parse(Array.from({ length: 200 }, () => 'true').join(' && '))).not.toThrow()
  })
})
