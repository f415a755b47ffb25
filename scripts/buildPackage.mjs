// Builds one workspace package (run from its folder): ESM + .d.ts + source maps with tsc, from
// `src` to `dist`, leaving tests and test helpers out. Workspace imports resolve to the built
// packages (`node_modules/@latchkey/*` -> `dist`), so build them in dependency order: protocol,
// service, then the kit (scripts/build.mjs does).
import { execFileSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cwd = process.cwd()
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const config = path.join(cwd, 'tsconfig.build.generated.json')
writeFileSync(
  config,
  JSON.stringify({
    extends: path.relative(cwd, path.join(root, 'tsconfig.json')),
    compilerOptions: {
      noEmit: false,
      outDir: 'dist',
      rootDir: 'src',
      declaration: true,
      sourceMap: true,
      // Workspace imports resolve through node_modules to the packages already built.
      paths: {},
      types: ['node'],
    },
    include: ['src'],
    exclude: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
  }),
)
rmSync(path.join(cwd, 'dist'), { recursive: true, force: true })
try {
  execFileSync(process.execPath, [tsc, '-p', config], { stdio: 'inherit', cwd })
} finally {
  rmSync(config, { force: true })
}
