// Builds the packages in dependency order: @latchkey/protocol, @latchkey/service, then the kit
// (`latchkey`: ESM + .d.ts with tsc, then the stylesheet).
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
for (const pkg of ['packages/protocol', 'packages/service']) {
  execFileSync(process.execPath, ['../../scripts/buildPackage.mjs'], { stdio: 'inherit', cwd: pkg })
}
rmSync('dist', { recursive: true, force: true })
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
if (existsSync('src/components/styles.css')) copyFileSync('src/components/styles.css', 'dist/styles.css')
