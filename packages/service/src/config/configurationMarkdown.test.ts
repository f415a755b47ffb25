import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { configKeys } from './configSchema.ts'
import { configurationMarkdown } from './configurationMarkdown.ts'

const DOC = fileURLToPath(new URL('../../../../docs/configuration.md', import.meta.url))

describe('docs/configuration.md', () => {
  it('is the reference generated from the schema (regenerate: npx tsx packages/service/src/cli.ts config docs > docs/configuration.md)', () => {
    expect(readFileSync(DOC, 'utf8')).toBe(configurationMarkdown())
  })

  it('describes every key', () => {
    for (const key of configKeys()) expect(key.description, key.path.join('.')).not.toBe('')
  })
})
