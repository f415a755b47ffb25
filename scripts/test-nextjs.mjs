// Builds examples/nextjs the way a Next.js user gets the kit: packs `latchkey` and
// `@latchkey/protocol` (scripts/packKit.mjs), copies the example to a temporary folder, installs
// the tarballs and the example's own dependencies from the npm registry, and runs `next build`.
// Then checks that the prerendered page went through the client boundary: the server HTML holds
// the modal's "Sign in" trigger. `--reuse-packs` reuses earlier tarballs; `--keep` keeps the folder.
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { packKit, root } from './packKit.mjs'

const started = Date.now()
const step = (text) =>
  process.stderr.write(`[nextjs ${((Date.now() - started) / 1000).toFixed(1)}s] ${text}\n`)
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

const { kit, protocol } = packKit({ reuse: process.argv.includes('--reuse-packs') })
const dir = mkdtempSync(path.join(tmpdir(), 'latchkey-nextjs-'))
let failed = true
try {
  cpSync(path.join(root, 'examples/nextjs'), dir, {
    recursive: true,
    filter: (source) => !/[\\/](node_modules|\.next)([\\/]|$)/.test(source),
  })
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))
  // The tarballs stand in for the registry; the kit's own dependency on @latchkey/protocol must
  // resolve to its tarball too (it is not published from here).
  manifest.dependencies.latchkey = `file:${kit}`
  manifest.dependencies['@latchkey/protocol'] = `file:${protocol}`
  manifest.overrides = { '@latchkey/protocol': '$@latchkey/protocol' }
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2))

  step(`npm install in ${dir}`)
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    stdio: 'inherit',
  })
  step('next build')
  execFileSync(path.join(dir, 'node_modules/.bin/next'), ['build'], {
    cwd: dir,
    stdio: 'inherit',
    env: {
      ...process.env,
      NEXT_TELEMETRY_DISABLED: '1',
      // Shaped like the ids `latchkey-service dev` prints; the build never calls the service.
      NEXT_PUBLIC_LATCHKEY_AUTH_PROXY_URL: 'http://localhost:8787',
      NEXT_PUBLIC_LATCHKEY_BASE_URL: 'http://localhost:8787',
      NEXT_PUBLIC_LATCHKEY_AUTH_PROXY_CONFIG_ID: '7d3f5a0e-9b1c-4e2a-8f6d-0c1b2a3d4e5f',
      NEXT_PUBLIC_LATCHKEY_ORGANIZATION_ID: '1a2b3c4d-5e6f-4a1b-9c2d-3e4f5a6b7c8d',
      NEXT_PUBLIC_LATCHKEY_TRUSTED_SIGNER_PUBLIC_KEY: `04${'11'.repeat(64)}`,
    },
  })
  const html = readFileSync(path.join(dir, '.next/server/app/index.html'), 'utf8')
  if (!/<button[^>]*aria-haspopup="dialog"[^>]*>Sign in<\/button>/.test(html))
    throw new Error(
      'the prerendered page has no "Sign in" trigger: <AuthModal/> did not render on the server',
    )
  step('ok: examples/nextjs builds against the packed kit and prerenders <AuthModal/>')
  failed = false
} catch (error) {
  process.stderr.write(`test-nextjs: ${error.message}\n`)
} finally {
  if (process.argv.includes('--keep')) step(`kept ${dir}`)
  else rmSync(dir, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
