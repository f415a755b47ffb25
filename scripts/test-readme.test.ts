// The README's static checks (scripts/test-readme.mjs), without packing or installing anything:
// `npm run test:packages` then builds and runs the blocks in a fresh app.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  missingInstalls,
  onlyExportComponentsProblems,
  providedPackages,
  readmeBlocks,
  readmeInstalls,
  readmeShapeProblems,
} from './test-readme.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const readme = readFileSync(path.join(root, 'README.md'), 'utf8')
const docs = readdirSync(path.join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .flatMap((name) => readmeBlocks(readFileSync(path.join(root, 'docs', name), 'utf8'), `docs/${name}`))

describe('the README', () => {
  it('keeps its shape and length', () => {
    expect(readmeShapeProblems(readme)).toEqual([])
  })

  it('has no .tsx block the react-ts template’s linter warns about (react-refresh/only-export-components)', () => {
    expect(onlyExportComponentsProblems([...readmeBlocks(readme), ...docs])).toEqual([])
  })

  it('the check catches a config exported next to a component', () => {
    const block = (code: string) => ({ file: 'src/App.tsx', code, line: 1, source: 'x.md' })
    expect(
      onlyExportComponentsProblems([
        block(
          '// src/App.tsx\nexport const config = {}\nexport default function App() {\n  return null\n}\n',
        ),
      ]),
    ).toHaveLength(1)
    expect(
      onlyExportComponentsProblems([
        block('// src/App.tsx\nconst x = 1\nexport { x, App as Main }\nfunction App() {}\n'),
      ]),
    ).toHaveLength(1)
    expect(
      onlyExportComponentsProblems([
        block(
          "// src/App.tsx\nimport { config } from './latchkeyConfig'\nexport default function App() {}\n",
        ),
      ]),
    ).toEqual([])
    expect(
      onlyExportComponentsProblems([
        { ...block('// src/config.ts\nexport const config = {}\n'), file: 'src/config.ts' },
      ]),
    ).toEqual([])
  })

  it('installs, with its own npm install commands, every package its recipes and the docs’ import', () => {
    const installs = readmeInstalls(readme)
    // The kit and protocol tarballs in one install, the service's as a dev dependency, then the recipes'.
    expect(installs[0]).toEqual(['../latchkey/latchkey-0.1.0.tgz', '../latchkey/latchkey-protocol-0.1.0.tgz'])
    expect(installs[1]).toEqual(['-D', '../latchkey/latchkey-service-0.1.0.tgz'])
    expect(installs.slice(2)).toContainEqual(['wagmi', 'viem'])
    expect(missingInstalls([...readmeBlocks(readme), ...docs], installs, providedPackages())).toEqual([])
  })

  it('the install check catches a recipe importing a package its install leaves out', () => {
    const block = {
      file: 'src/solana.ts',
      code: "// src/solana.ts\nimport { getTransferSolInstruction } from '@solana-program/system'\nimport { pipe } from '@solana/kit'\nimport { createLatchkeySolanaSigner } from 'latchkey/solana'\nimport { x } from './y'\n",
      line: 3,
      source: 'docs/solana.md',
    }
    expect(missingInstalls([block], [['@solana/kit']], ['latchkey'])).toEqual([
      'docs/solana.md:3: src/solana.ts imports @solana-program/system, which no `npm install` of the README brings',
    ])
    expect(missingInstalls([block], [['@solana/kit', '@solana-program/system']], ['latchkey'])).toEqual([])
  })
})
