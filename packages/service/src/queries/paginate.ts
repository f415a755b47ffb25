import { PAGINATION, type PaginationOptions } from '@latchkey/protocol'
import { FieldError } from '../kernel/base/errors.ts'
import type { Reader } from '../kernel/Reader.ts'

export function readPagination(r: Reader): Required<Pick<PaginationOptions, 'limit'>> & PaginationOptions {
  const options = r.optObject('paginationOptions')
  if (!options) return { limit: String(PAGINATION.defaultLimit) }
  const limit = options.optUintString('limit') ?? String(PAGINATION.defaultLimit)
  if (Number(limit) < PAGINATION.minLimit || Number(limit) > PAGINATION.maxLimit)
    throw new FieldError({
      field: 'paginationOptions.limit',
      reason: `must be between ${PAGINATION.minLimit} and ${PAGINATION.maxLimit}`,
    })
  const before = options.optString('before', { max: 200 })
  const after = options.optString('after', { max: 200 })
  return { limit, ...(before !== undefined ? { before } : {}), ...(after !== undefined ? { after } : {}) }
}

/**
 * One page of id-ordered items: those after `after` (first `limit`), or before `before` (the
 * `limit` closest to it), or the first `limit`.
 */
export function paginate<T>(items: T[], idOf: (item: T) => string, options: PaginationOptions): T[] {
  const limit = Number(options.limit ?? PAGINATION.defaultLimit)
  let selected = items
  if (options.after !== undefined) selected = selected.filter((item) => idOf(item) > options.after!)
  if (options.before !== undefined) {
    selected = selected.filter((item) => idOf(item) < options.before!)
    return selected.slice(Math.max(0, selected.length - limit))
  }
  return selected.slice(0, limit)
}
