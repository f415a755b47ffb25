// Builds the packages in dependency order: @latchkey/protocol, @latchkey/service, then the kit
// (`latchkey`: ESM + .d.ts + source maps with tsc, then the stylesheet). `--kit` builds only what
// the kit needs (protocol, then the kit), as the packed-package tests do.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'

const kitOnly = process.argv.includes('--kit')
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
for (const pkg of kitOnly ? ['packages/protocol'] : ['packages/protocol', 'packages/service']) {
  execFileSync(process.execPath, ['../../scripts/buildPackage.mjs'], { stdio: 'inherit', cwd: pkg })
}
rmSync('dist', { recursive: true, force: true })
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
if (existsSync('src/components/styles.css')) copyFileSync('src/components/styles.css', 'dist/styles.css')
// The client boundary must survive compilation: Next.js reads it from the emitted entry file.
if (!readFileSync('dist/index.js', 'utf8').startsWith("'use client'"))
  throw new Error("dist/index.js lost its 'use client' directive")
