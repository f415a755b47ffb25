import { CryptoInputError } from './errors.ts'
import { HARDENED_OFFSET } from './slip10.ts'

/** One parsed path segment. */
export interface PathSegment {
  index: number
  hardened: boolean
}

const SEGMENT = /^(\d{1,10})(['hH]?)$/
/**
 * Most levels a path may have. BIP-32 allows 255, but no wallet standard goes past 6 (BIP-44's
 * five, a few with one more), and each non-hardened level of a secp256k1 path costs a point
 * multiplication (about a millisecond) on the thread that derives it: 127 levels made one
 * account cost 90 ms, and 40 of them in one request held the service for 3.5 s.
 */
export const MAX_PATH_DEPTH = 16

/**
 * Parses a BIP-32 path such as `m/44'/60'/0'/0/0` (hardened marks `'` or `h`).
 * Throws CryptoInputError (field 'path') on anything else.
 */
export function parsePath(path: string): PathSegment[] {
  if (typeof path !== 'string') throw new CryptoInputError('path must be a string', 'path')
  const parts = path.trim().split('/')
  if (parts[0] !== 'm' && parts[0] !== 'M')
    throw new CryptoInputError(`path must start with "m/", got "${path}"`, 'path')
  const rest = parts.slice(1)
  if (rest.length > MAX_PATH_DEPTH)
    throw new CryptoInputError(`path is deeper than ${MAX_PATH_DEPTH} levels`, 'path')
  return rest.map((part) => {
    const match = SEGMENT.exec(part)
    if (!match) throw new CryptoInputError(`invalid path segment "${part}" in "${path}"`, 'path')
    const index = Number(match[1])
    if (index >= HARDENED_OFFSET)
      throw new CryptoInputError(`path segment "${part}" is out of range (must be below 2^31)`, 'path')
    return { index, hardened: match[2] !== '' }
  })
}

/** The canonical spelling of a parsed path (`'` for hardened), as @scure/bip32 expects it. */
export function formatPath(segments: readonly PathSegment[]): string {
  return ['m', ...segments.map((s) => `${s.index}${s.hardened ? "'" : ''}`)].join('/')
}
