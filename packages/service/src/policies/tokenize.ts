import { POLICY_LIMITS } from './limits.ts'
import { PolicySyntaxError } from './PolicySyntaxError.ts'

export type TokenKind = 'int' | 'string' | 'ident' | 'op' | 'end'

export interface Token {
  kind: TokenKind
  /** The literal's value (strings unescaped), the identifier or the operator. */
  text: string
  /** 0-based offset of the token's first character. */
  pos: number
}

/** Longest operators first, so `..` wins over `.` and `<=` over `<`. */
const OPERATORS = ['&&', '||', '==', '!=', '<=', '>=', '..', '<', '>', '!', '(', ')', '[', ']', ',', '.']

const ESCAPES: Record<string, string> = { "'": "'", '\\': '\\', n: '\n', t: '\t', r: '\r', '0': '\0' }

const isDigit = (c: string) => c >= '0' && c <= '9'
const isIdentStart = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_'
const isIdentPart = (c: string) => isIdentStart(c) || isDigit(c)

/** Splits an expression into tokens; unknown characters and unterminated strings are syntax errors. */
export function tokenize(source: string): Token[] {
  if (source.length > POLICY_LIMITS.maxExpressionLength)
    throw new PolicySyntaxError(
      `expression is ${source.length} characters; the limit is ${POLICY_LIMITS.maxExpressionLength}`,
      POLICY_LIMITS.maxExpressionLength,
    )
  const tokens: Token[] = []
  let i = 0
  while (i < source.length) {
    const c = source[i]!
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++
      continue
    }
    const start = i
    if (isDigit(c)) {
      while (i < source.length && isDigit(source[i]!)) i++
      if (i < source.length && isIdentPart(source[i]!))
        throw new PolicySyntaxError(`invalid number '${source.slice(start, i + 1)}'`, start)
      const text = source.slice(start, i)
      if (text.length > POLICY_LIMITS.maxIntegerDigits)
        throw new PolicySyntaxError(
          `integer has ${text.length} digits; the limit is ${POLICY_LIMITS.maxIntegerDigits}`,
          start,
        )
      tokens.push({ kind: 'int', text, pos: start })
      continue
    }
    if (isIdentStart(c)) {
      while (i < source.length && isIdentPart(source[i]!)) i++
      tokens.push({ kind: 'ident', text: source.slice(start, i), pos: start })
      continue
    }
    if (c === "'") {
      let text = ''
      i++
      for (;;) {
        if (i >= source.length) throw new PolicySyntaxError('unterminated string', start)
        const d = source[i]!
        if (d === "'") break
        if (d === '\\') {
          const next = source[i + 1]
          const escaped = next === undefined ? undefined : ESCAPES[next]
          if (escaped === undefined)
            throw new PolicySyntaxError(`unknown escape '\\${next ?? ''}' in string`, i)
          text += escaped
          i += 2
          continue
        }
        text += d
        i++
      }
      i++
      tokens.push({ kind: 'string', text, pos: start })
      continue
    }
    if (c === '"') throw new PolicySyntaxError('strings use single quotes', start)
    const op = OPERATORS.find((candidate) => source.startsWith(candidate, i))
    if (!op) throw new PolicySyntaxError(`unexpected character '${c}'`, start)
    tokens.push({ kind: 'op', text: op, pos: start })
    i += op.length
  }
  tokens.push({ kind: 'end', text: '', pos: source.length })
  return tokens
}
