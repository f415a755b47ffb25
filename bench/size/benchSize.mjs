// `npm run bench:size`: the minimal apps of bench/size/apps and the same sign-in app built with
// the anchor (@turnkey/react-wallet-kit 2.4.3), in one run, plus what `npm install` costs.
// Prints figures; it is a benchmark, not a test. The anchor is installed on demand into
// bench/anchor/node_modules (git-ignored, never a dependency of latchkey) and kept as a cache.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { kb, measureApp, printTable, projectRoot } from './measureApp.mjs'
import {
  adapterApps,
  adapterBaseApps,
  anchorApp,
  joinedApps,
  queryWagmiApp,
  sharedPackages,
  sizeApps,
} from './sizeApps.mjs'

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

/** What the kit must never bring into an app: the service's dependencies and any database driver. */
const SERVICE_ONLY = [
  'hono',
  '@hono/node-server',
  '@simplewebauthn/server',
  '@ton/core',
  '@ton/crypto',
  'jose',
  'libphonenumber-js',
  'micro-eth-signer',
  'better-sqlite3',
  'pg',
  'kysely',
  '@latchkey/service',
]
/** What the service must never bring into a server: React and the kit. */
const KIT_ONLY = ['react', 'react-dom', '@tanstack/react-query', 'zustand', 'latchkey']

/**
 * `npm pack` the workspace packages named, install the tarballs into a fresh app, measure its
 * node_modules and list the unwanted packages found there.
 * @param {string} label @param {string[]} workspaces folders to pack @param {string[]} unwanted
 */
function installFootprint(label, workspaces, unwanted) {
  const work = mkdtempSync(join(tmpdir(), 'latchkey-install-'))
  try {
    const tarballs = workspaces.map((dir) => {
      const out = execFileSync(
        'npm',
        ['pack', '--json', '--ignore-scripts', '--pack-destination', work, '--loglevel=error'],
        { cwd: join(projectRoot, dir), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      )
      return join(work, JSON.parse(out.slice(out.indexOf('[')))[0].filename)
    })
    const app = join(work, 'app')
    execFileSync('mkdir', [app])
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true }))
    execFileSync('npm', ['install', ...npmFlags, ...tarballs], { cwd: app, stdio: 'ignore' })
    const found = unwanted.filter((name) => existsSync(join(app, 'node_modules', name, 'package.json')))
    return { label, ...footprint(join(app, 'node_modules')), found }
  } catch (error) {
    const stderr = /** @type {any} */ (error).stderr?.toString().trim().split('\n').slice(-3).join(' ')
    return { label, error: stderr || (error instanceof Error ? error.message : String(error)) }
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

/**
 * Latchkey joining an existing app: start-up cost beyond that app, and whether a package the app
 * and the kit both use (react-query above all) was bundled once.
 */
const joined = await Promise.all(
  [queryWagmiApp, ...joinedApps].map(async (app) => {
    try {
      return [app.name, await measureApp(app)]
    } catch (error) {
      return [app.name, error instanceof Error ? error.message.split('\n')[0] : String(error)]
    }
  }),
)
const joinedBy = Object.fromEntries(joined)
console.log('\nLatchkey added to an app that already uses react-query and wagmi (gzip -9)\n')
printTable(
  [
    'app',
    'start-up',
    'all chunks',
    'Latchkey start-up',
    'Latchkey all',
    'target',
    'copies of shared packages',
  ],
  [queryWagmiApp, ...joinedApps].map((app) => {
    const size = joinedBy[app.name]
    if (typeof size === 'string' || !size) return [app.label, 'n/a', 'n/a', '', '', '', String(size ?? '')]
    const copies = sharedPackages
      .filter((name) => size.packageRoots.has(name))
      .map((name) => `${name} ${size.packageRoots.get(name).size}`)
      .join(', ')
    if (!('base' in app)) return [app.label, kb(size.startup.total), kb(size.all.total), '', '', '', copies]
    const base = joinedBy[app.base]
    if (typeof base === 'string' || !base)
      return [app.label, kb(size.startup.total), kb(size.all.total), '', '', '', copies]
    const cost = size.startup.total - base.startup.total
    return [
      app.label,
      kb(size.startup.total),
      kb(size.all.total),
      kb(cost),
      kb(size.all.total - base.all.total),
      `≤ ${kb(app.target)} ${cost <= app.target ? 'met' : 'OVER'}`,
      copies,
    ]
  }),
)

/**
 * Adapter entries. Each app is built twice: whole, and with the adapted library left out
 * (external). `cost` is what the adapter adds to an app that already uses latchkey/core and the
 * library; `beyond the library` leaves out the library's own modules it pulls in (the target).
 */
const adapterTarget = 4_000
const adapterSizes = await Promise.all(
  [...adapterBaseApps, ...adapterApps].flatMap((app) => {
    const library = adapterApps.find((a) => a.name === app.name || a.base === app.name)?.library ?? ''
    const external = new RegExp(`^${library}(/|$)`)
    return [
      [app.name, app],
      [`${app.name} without ${library}`, { ...app, external }],
    ].map(async ([key, options]) => {
      const missing = app.needs.filter((file) => !existsSync(join(projectRoot, file)))
      if (missing.length > 0) return [key, { error: `${missing.join(', ')} not written yet` }]
      try {
        return [key, { size: await measureApp(options) }]
      } catch (error) {
        return [key, { error: error instanceof Error ? error.message.split('\n')[0] : String(error) }]
      }
    })
  }),
)
const adapterBy = Object.fromEntries(adapterSizes)
console.log(
  '\nadapter entry points: cost in an app that already uses latchkey/core and the library (gzip -9)\n',
)
printTable(
  ['entry', 'app with it', 'base app', 'cost', 'cost beyond the library', `target ${kb(adapterTarget)}`],
  adapterApps.map((app) => {
    const of = (/** @type {string} */ key) => adapterBy[key]?.size?.all.total
    const [own, base] = [of(app.name), of(app.base)]
    const [ownBare, baseBare] = [
      of(`${app.name} without ${app.library}`),
      of(`${app.base} without ${app.library}`),
    ]
    if (own === undefined || base === undefined || ownBare === undefined || baseBare === undefined)
      return [
        app.label,
        'n/a',
        'n/a',
        '',
        '',
        adapterBy[app.name]?.error ?? adapterBy[app.base]?.error ?? 'n/a',
      ]
    const beyond = ownBare - baseBare
    return [
      app.label,
      kb(own),
      kb(base),
      kb(own - base),
      kb(beyond),
      beyond <= adapterTarget ? 'met' : 'OVER',
    ]
  }),
)

console.log(
  '\nnpm install into a fresh app (peers included; --ignore-scripts; built first with npm run build):\n',
)
execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: projectRoot, stdio: 'ignore' })
const anchorFootprint = footprint(join(anchorDir, 'node_modules'))
const footprints = [
  installFootprint('latchkey + @latchkey/protocol (the kit)', ['.', 'packages/protocol'], SERVICE_ONLY),
  installFootprint(
    '@latchkey/service + @latchkey/protocol',
    ['packages/service', 'packages/protocol'],
    KIT_ONLY,
  ),
]
printTable(
  ['package', 'packages', 'disk (du -sh)', 'unwanted found', 'heaviest'],
  [
    ...footprints.map((f) =>
      'error' in f
        ? [f.label, 'n/a', 'n/a', '', `npm pack/install failed: ${f.error}`]
        : [
            f.label,
            String(f.packages),
            `${f.megabytes.toFixed(0)} MB`,
            f.found.length ? f.found.join(', ') : 'none',
            f.heaviest.join(', '),
          ],
    ),
    [
      `@turnkey/react-wallet-kit@${anchorVersion}`,
      String(anchorFootprint.packages),
      `${anchorFootprint.megabytes.toFixed(0)} MB`,
      '',
      anchorFootprint.heaviest.join(', '),
    ],
  ],
)
console.log(`  unwanted in the kit: ${SERVICE_ONLY.join(', ')}; in the service: ${KIT_ONLY.join(', ')}`)
console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`)
