import { vi } from 'vitest'
import { Queries } from '../../src/kernel/store/Queries.ts'

/**
 * Counts the rows the store reads from its database from now on (by field, by page, by id, every
 * row of a table): `rows()` says how many so far. Restore with `vi.restoreAllMocks()`.
 */
export function countRowsRead(): { rows: () => Promise<number> } {
  const spies = (['findBy', 'pageBy', 'get', 'all'] as const).map((name) => vi.spyOn(Queries.prototype, name))
  return {
    rows: async () => {
      let rows = 0
      for (const spy of spies)
        for (const result of spy.mock.results) {
          const value = (await result.value) as unknown
          rows += Array.isArray(value) ? value.length : value === undefined ? 0 : 1
        }
      return rows
    },
  }
}
