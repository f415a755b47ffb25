import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const srcDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/**
 * The packages an entry loads at run time: the bare specifiers of its static and dynamic imports
 * (not `import type`/`export type`, which the build erases), following its relative imports.
 */
function runtimePackages(entry: string): Set<string> {
  const packages = new Set<string>()
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const code = readFileSync(file, 'utf8')
    const specifiers = [
      ...code.matchAll(/^(?:import|export)\s+(?!type\s)[^'";]*?from\s+'([^']+)'/gm),
      ...code.matchAll(/^import\s+'([^']+)'/gm),
      ...code.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
    ].map((match) => match[1] as string)
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) visit(path.resolve(path.dirname(file), specifier))
      else
        packages.add(
          specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!,
        )
    }
  }
  visit(path.join(srcDir, entry))
  return packages
}

describe('latchkey/wagmi entries: each loads only what its app installs', () => {
  it('latchkey/wagmi takes the connector API from wagmi (npm may nest @wagmi/core out of reach)', () => {
    const packages = runtimePackages('wagmi/index.ts')
    expect(packages).toContain('wagmi')
    expect(packages).toContain('viem')
    expect(packages).not.toContain('@wagmi/core')
  })

  it('latchkey/wagmi/core takes it from @wagmi/core, and loads neither wagmi nor React', () => {
    const packages = runtimePackages('wagmi/core.ts')
    expect(packages).toContain('@wagmi/core')
    expect(packages).not.toContain('wagmi')
    expect(packages).not.toContain('react')
  })
})
