// Packs the kit (`latchkey`), `@latchkey/protocol` and `@latchkey/service` as npm would publish
// them, for the tests that install the packages into a fresh app (scripts/test-readme.mjs,
// scripts/test-nextjs.mjs). Builds first (scripts/build.mjs); `reuse` keeps tarballs an earlier
// run left.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { prepareReadme, restoreReadme } from './absoluteLinks.mjs'

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const packDir = path.join(root, 'node_modules/.cache/latchkey-packs')
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

const KIT = /^latchkey-\d.*\.tgz$/
const PROTOCOL = /^latchkey-protocol-\d.*\.tgz$/
const SERVICE = /^latchkey-service-\d.*\.tgz$/
const find = (pattern) => readdirSync(packDir).find((f) => pattern.test(f))

/** Builds and packs; returns the absolute paths of the three tarballs. */
export function packKit({ reuse = false, log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  if (reuse && existsSync(packDir) && find(KIT) && find(PROTOCOL) && find(SERVICE)) {
    log(`packKit: reusing the tarballs in ${path.relative(root, packDir)}`)
  } else {
    log('packKit: building @latchkey/protocol, @latchkey/service and latchkey')
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' })
    rmSync(packDir, { recursive: true, force: true })
    mkdirSync(packDir, { recursive: true })
    for (const dir of [root, path.join(root, 'packages/protocol'), path.join(root, 'packages/service')]) {
      // Already built: skip `prepack` (it would build everything again), but rewrite the README's
      // relative links as it does (scripts/absoluteLinks.mjs), and put it back after.
      prepareReadme(dir)
      try {
        execFileSync(npm, ['pack', '--ignore-scripts', '--silent', '--pack-destination', packDir], {
          cwd: dir,
          stdio: ['ignore', 'ignore', 'inherit'],
        })
      } finally {
        restoreReadme(dir)
      }
    }
  }
  const kit = find(KIT)
  const protocol = find(PROTOCOL)
  const service = find(SERVICE)
  if (!kit || !protocol || !service) throw new Error(`packKit: no tarballs in ${packDir}`)
  return {
    kit: path.join(packDir, kit),
    protocol: path.join(packDir, protocol),
    service: path.join(packDir, service),
  }
}
