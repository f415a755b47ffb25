import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * The store is reached through its named operations only: no file of the service outside
 * `kernel/store/` (tests aside) imports Kysely, reaches the store's Kysely instance (`kyselyOf`,
 * `.db`) or writes a statement of one database's own, so every statement that differs between
 * SQLite and PostgreSQL is in `kernel/store/backends/`.
 */
const SRC = join(import.meta.dirname, '..', '..')

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [path] : []
  })
}

/** `text` without its comments (which may name statements: they run nothing). */
const withoutComments = (text: string) =>
  text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1')

/** What a file outside the store must not hold, each with what it betrays. */
const REFUSED: [RegExp, string][] = [
  [/from ['"]kysely['"]/, 'imports Kysely'],
  [/kyselyOf/, "reaches the store's Kysely instance"],
  [/\bstore\.db\b|\.store\.db\b|\[['"]db['"]\]/, "reads the store's database handle"],
  [
    /::(text|double precision|int|bigint|jsonb?)\b|=\s*any\s*\(|\bunnest\s*\(|\bgreatest\s*\(/i,
    'writes PostgreSQL',
  ],
  [/\bPRAGMA\b|\bVACUUM\b|\bjson_each\s*\(/, 'writes SQLite'],
]

describe('the store boundary', () => {
  it('no service file outside kernel/store/ imports Kysely, reads store.db or writes dialect SQL', () => {
    const offences: string[] = []
    for (const file of sources(SRC)) {
      const name = relative(SRC, file)
      if (name.startsWith(join('kernel', 'store'))) continue
      const text = withoutComments(readFileSync(file, 'utf8'))
      for (const [pattern, what] of REFUSED) if (pattern.test(text)) offences.push(`${name} ${what}`)
    }
    expect(offences).toEqual([])
  })

  it('inside kernel/store/, only the backends write one database’s SQL for the store', () => {
    // The shapes `Queries` builds are every database's; `any(`, `unnest(` and casts are the backends'.
    const text = withoutComments(readFileSync(join(SRC, 'kernel', 'store', 'Queries.ts'), 'utf8'))
    expect(text).not.toMatch(/\bany\s*\(|\bunnest\s*\(|::\w/)
  })
})
