import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ACTIVITIES, ACTIVITY_PATHS, wireKeysOf } from './index.ts'

/**
 * The published types this package is checked against: `turnkey-http-6` is @turnkey/http 6.6.0
 * pinned as a devDependency, whose generated `public_api.types.d.ts` names every activity type
 * and the keys of every intent and result.
 */
const publishedTypes = readFileSync(
  join(
    dirname(createRequire(import.meta.url).resolve('turnkey-http-6')),
    '__generated__/services/coordinator/public/v1/public_api.types.d.ts',
  ),
  'utf8',
)

/** The string literals of the union type `name` in the published definitions. */
function unionOf(name: string): string[] {
  const line = publishedTypes.split('\n').find((text) => text.trimStart().startsWith(`${name}: "`))
  if (!line) throw new Error(`no union ${name} in the published types`)
  return [...line.matchAll(/"([A-Z0-9_]+)"/g)].map((match) => match[1] as string)
}

/** The field names of the object type `name` in the published definitions. */
function fieldsOf(name: string): Set<string> {
  const start = publishedTypes.indexOf(`\n    ${name}: {\n`)
  if (start < 0) throw new Error(`no type ${name} in the published types`)
  const end = publishedTypes.indexOf('\n    };', start)
  return new Set(
    [...publishedTypes.slice(start, end).matchAll(/^ {8}([A-Za-z0-9]+)\??:/gm)].map(
      (match) => match[1] as string,
    ),
  )
}

const versionOf = (base: string, type: string) => (type === base ? 1 : Number(type.slice(base.length + 2)))

const PUBLISHED_TYPES = unionOf('v1ActivityType')
const INTENT_KEYS = fieldsOf('v1Intent')
const RESULT_KEYS = fieldsOf('v1Result')

/**
 * Latchkey's own activities (paths `latchkey_…`, types `ACTIVITY_TYPE_LATCHKEY_…`): namespaced so
 * they never collide with a published name, and checked apart from the published ones.
 */
const isLatchkeyOwn = (path: string) => path.startsWith('latchkey_')
const OWN = ACTIVITY_PATHS.filter(isLatchkeyOwn)

/** Every implemented activity with the versions the published types name for it, oldest first. */
const published = ACTIVITY_PATHS.filter((path) => !isLatchkeyOwn(path)).map((path) => {
  const base = `ACTIVITY_TYPE_${path.toUpperCase()}`
  const versions = PUBLISHED_TYPES.filter((type) => type === base || new RegExp(`^${base}_V\\d+$`).test(type))
  versions.sort((a, b) => versionOf(base, a) - versionOf(base, b))
  return { path, versions, accepted: ACTIVITIES[path].types as readonly string[] }
})

describe('the activity versions accepted, against the published types (@turnkey/http 6.6.0)', () => {
  it("names Latchkey's own activities ACTIVITY_TYPE_LATCHKEY_*, none of them a published type", () => {
    const own = OWN.flatMap((path) => ACTIVITIES[path].types as readonly string[])
    expect(
      own.filter((type) => !type.startsWith('ACTIVITY_TYPE_LATCHKEY_') || PUBLISHED_TYPES.includes(type)),
    ).toEqual([])
  })

  it('accepts the newest published version of every implemented activity', () => {
    const missing = published.flatMap(({ path, versions, accepted }) => {
      const newest = versions.at(-1)
      return newest === undefined || accepted.includes(newest) ? [] : [`${path}: ${newest}`]
    })
    const accepted = published.reduce((count, entry) => count + entry.accepted.length, 0)
    console.info(
      `published types: ${published.length} implemented activities × versions accepted = ${accepted} activity versions`,
    )
    expect(missing).toEqual([])
  })

  it('implements only activities the published types name, and accepts only published versions', () => {
    expect(published.filter((entry) => entry.versions.length === 0).map((entry) => entry.path)).toEqual([])
    const unpublished = published.flatMap(({ accepted }) =>
      accepted.filter((type) => !PUBLISHED_TYPES.includes(type)),
    )
    expect(unpublished).toEqual([])
  })

  it('answers every accepted version under an intent key and a result key the published types declare', () => {
    const wrong = published.flatMap(({ path, accepted }) =>
      accepted.flatMap((type) => {
        const { intentKey, resultKey } = wireKeysOf(path, ACTIVITIES[path], type)
        return [
          ...(INTENT_KEYS.has(intentKey) ? [] : [`${type}: intent ${intentKey}`]),
          // Votes answer with the voted-on activity and declare no result of their own.
          ...(RESULT_KEYS.has(resultKey) || path.endsWith('_activity')
            ? []
            : [`${type}: result ${resultKey}`]),
        ]
      }),
    )
    expect(wrong).toEqual([])
  })
})
