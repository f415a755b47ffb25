// Builds the package: ESM + .d.ts with tsc, then the stylesheet.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, rmSync } from 'node:fs'

rmSync('dist', { recursive: true, force: true })
execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
if (existsSync('src/components/styles.css')) copyFileSync('src/components/styles.css', 'dist/styles.css')
