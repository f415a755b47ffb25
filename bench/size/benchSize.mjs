// `npm run bench:size`: the minimal apps of bench/size/apps and the same sign-in app built with
// the anchor (@turnkey/react-wallet-kit 2.4.3), in one run, plus what `npm install` costs.
// Prints figures; it is a benchmark, not a test. The anchor is installed on demand into
// bench/anchor/node_modules (git-ignored, never a dependency of latchkey) and kept as a cache.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { kb, measureApp, printTable, projectRoot } from './measureApp.mjs'
import { anchorApp, sizeApps } from './sizeApps.mjs'

const anchorDir = join(projectRoot, 'bench/anchor')
const anchorVersion = '2.4.3'
const npmFlags = ['--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error']

function ensureAnchor() {
  const manifest = join(anchorDir, 'node_modules/@turnkey/react-wallet-kit/package.json')
  if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).version === anchorVersion) return
  console.log(`installing @turnkey/react-wallet-kit@${anchorVersion} into bench/anchor/node_modules …`)
  execFileSync('npm', ['install', ...npmFlags], { cwd: anchorDir, stdio: 'inherit' })
}

/**
 * Packages in a node_modules tree (nested ones too), as npm counts them when it says
 * "added N packages", and the tree's disk usage as `du -sk` reports it.
 * @param {string} nodeModules
 */
function footprint(nodeModules) {
  let packages = 0
  const walk = (/** @type {string} */ dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue
      const path = join(dir, entry.name)
      if (entry.name.startsWith('@')) {
        walk(path)
        continue
      }
      if (existsSync(join(path, 'package.json'))) packages++
      if (existsSync(join(path, 'node_modules'))) walk(join(path, 'node_modules'))
    }
  }
  walk(nodeModules)
  const kib = Number(execFileSync('du', ['-sk', nodeModules], { encoding: 'utf8' }).split('\t')[0])
  const perPackage = execFileSync('sh', ['-c', 'du -sk -- [!@.]* @*/* 2>/dev/null || true'], {
    cwd: nodeModules,
    encoding: 'utf8',
  })
  const heaviest = perPackage
    .trim()
    .split('\n')
    .map((line) => line.split('\t'))
    .filter((cells) => cells.length === 2 && !/^@[^/]*$/.test(cells[1] ?? ''))
    .sort((a, b) => Number(b[0]) - Number(a[0]))
    .slice(0, 5)
    .map(([k, name]) => `${name} ${(Number(k) / 1024).toFixed(1)} MB`)
  // `du -sh` prints MiB with an "M"; the "332 MB" is that figure.
  return { packages, megabytes: kib / 1024, heaviest }
}

/** @param {string} destination @param {boolean} build */
function pack(destination, build) {
  const args = ['pack', '--json', '--pack-destination', destination, '--loglevel=error']
  return execFileSync('npm', build ? args : [...args, '--ignore-scripts'], {
    cwd: projectRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/**
 * `npm pack` the project, install the tarball into a fresh app, measure its node_modules.
 * When `npm run build` (prepack) fails, packs without dist: the dependency count is exact and
 * the disk size misses only our own files, which the note says.
 */
function latchkeyFootprint() {
  const work = mkdtempSync(join(tmpdir(), 'latchkey-install-'))
  let note = ''
  try {
    let packed
    try {
      packed = pack(work, true)
    } catch (error) {
      const stdout = String(/** @type {any} */ (error).stdout ?? '')
      const tsc = stdout.match(/error TS\d+[^\n]*/)?.[0]
      note = `npm run build failed (${tsc ?? 'see npm run build'}), so packed without dist/`
      packed = pack(work, false)
    }
    const tarball = join(work, JSON.parse(packed.slice(packed.indexOf('[')))[0].filename)
    const app = join(work, 'app')
    execFileSync('mkdir', [app])
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true }))
    execFileSync('npm', ['install', ...npmFlags, tarball], { cwd: app, stdio: 'ignore' })
    return { ...footprint(join(app, 'node_modules')), note }
  } catch (error) {
    const stderr = /** @type {any} */ (error).stderr?.toString().trim().split('\n').slice(-3).join(' ')
    return { error: stderr || (error instanceof Error ? error.message : String(error)) }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

const started = performance.now()
ensureAnchor()
const apps = [...sizeApps, anchorApp]
const results = await Promise.all(
  apps.map(async (app) => {
    const missing = app.needs.filter((file) => !existsSync(join(projectRoot, file)))
    if (missing.length > 0) return { app, error: `${missing.join(', ')} not written yet` }
    try {
      return { app, size: await measureApp(app) }
    } catch (error) {
      return { app, error: error instanceof Error ? error.message.split('\n')[0] : String(error) }
    }
  }),
)
const byName = Object.fromEntries(results.map((r) => [r.app.name, r.size]))
const base = byName.baseline
if (!base) throw new Error('the react-only baseline did not build')

console.log(
  '\nbench:size: Vite 8 production builds, gzip -9 of every emitted JS + CSS file (1 kB = 1000 B)\n',
)
printTable(
  ['app', 'start-up', 'all chunks', 'start-up - baseline', 'all - baseline', 'files', 'build'],
  results.map(({ app, size }) =>
    size
      ? [
          app.label,
          kb(size.startup.total),
          kb(size.all.total),
          !app.react || app.name === 'baseline' ? '' : kb(size.startup.total - base.startup.total),
          !app.react || app.name === 'baseline' ? '' : kb(size.all.total - base.all.total),
          String(size.all.files),
          `${size.ms} ms`,
        ]
      : [app.label, 'n/a', 'n/a', '', '', '', ''],
  ),
)
for (const { app, error } of results) if (error) console.log(`  ${app.name} not measured: ${error}`)

const ours = byName.signin
const anchor = byName.anchor
if (ours && anchor) {
  const startupRatio = (anchor.startup.total - base.startup.total) / (ours.startup.total - base.startup.total)
  const allRatio = (anchor.all.total - base.all.total) / (ours.all.total - base.all.total)
  console.log(
    `\nanchor / latchkey sign-in app, beyond the baseline: start-up ${startupRatio.toFixed(1)}x, all chunks ${allRatio.toFixed(1)}x`,
  )
}

console.log('\nnpm install into a fresh app (peer react + react-dom included; --ignore-scripts):\n')
const anchorFootprint = footprint(join(anchorDir, 'node_modules'))
const ourFootprint = latchkeyFootprint()
printTable(
  ['package', 'packages', 'disk (du -sh)', 'heaviest'],
  [
    'error' in ourFootprint
      ? ['latchkey (npm pack)', 'n/a', 'n/a', `npm pack/install failed: ${ourFootprint.error}`]
      : [
          'latchkey (npm pack)',
          String(ourFootprint.packages),
          `${ourFootprint.megabytes.toFixed(0)} MB`,
          ourFootprint.heaviest.join(', '),
        ],
    [
      `@turnkey/react-wallet-kit@${anchorVersion}`,
      String(anchorFootprint.packages),
      `${anchorFootprint.megabytes.toFixed(0)} MB`,
      anchorFootprint.heaviest.join(', '),
    ],
  ],
)
if ('note' in ourFootprint && ourFootprint.note) console.log(`  latchkey: ${ourFootprint.note}`)
console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`)
