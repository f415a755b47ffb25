// The service's CLI as tests run it in child processes. Starting `src/cli.ts` through tsx costs
// about 4 s before the service is ready on this 2-core machine, most of it resolving and loading the
// service's ~300 modules through tsx's hooks; the same CLI bundled by esbuild is ready in about 2 s.
// The CLI starts hundreds of times in a test run, so tests run the bundle.
//
// The bundle is made from the sources as they are (once per state of the sources: the folder is
// named by a hash of them, so an edit makes a new one), into packages/service/.test-build/<hash>/:
// two folders below the package, as src/commands/ is, so the CLI finds its package.json, its crypto
// worker (bundled beside it) and anvil where the published build finds them. Third-party packages
// stay imports from node_modules; the workspace's @latchkey/protocol is bundled from its sources.
//
// The test services that run `createService` with options the CLI has no flag for
// (test/delivery/deliveryService.ts, test/webhooks/webhookService.ts) are bundled beside it, for
// the same reason: a start through tsx took 11.5 s of CPU, the bundle's 5.3 s (one `dev` start
// each, 2026-11-29, load average 28).
//
// LATCHKEY_TEST_CLI=tsx runs `src/cli.ts` (and those scripts) through tsx instead (stack traces name
// the sources).
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildSync } from 'esbuild'

const root = fileURLToPath(new URL('../../../../', import.meta.url))

const service = join(root, 'packages/service')
const SOURCES = [join(service, 'src'), join(root, 'packages/protocol/src'), join(service, 'test')]
/** The test services bundled beside the CLI (see `scriptCommand`). */
const SCRIPTS = {
  deliveryService: join(service, 'test/delivery/deliveryService.ts'),
  webhookService: join(service, 'test/webhooks/webhookService.ts'),
}
export type TestScript = keyof typeof SCRIPTS
const BUILDS = join(service, '.test-build')

/** Every non-test .ts file under `dir` (test/ holds the scripts bundled and what they import), sorted. */
function sourceFiles(dir: string): string[] {
  const files: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) files.push(...sourceFiles(path))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) files.push(path)
  }
  return files.sort()
}

/** A hash of the sources the bundle is made from (and of this file, which says how). */
function sourcesHash(): string {
  const hash = createHash('sha256')
  for (const file of [...SOURCES.flatMap(sourceFiles), fileURLToPath(import.meta.url)]) {
    hash.update(relative(root, file))
    hash.update('\0')
    hash.update(readFileSync(file))
    hash.update('\0')
  }
  return hash.digest('hex').slice(0, 16)
}

let entry: string | undefined

/** The bundled CLI for the sources as they are now, built if there is none yet. */
function bundledCli(): string {
  if (entry !== undefined) return entry
  const dir = join(BUILDS, sourcesHash())
  const cli = join(dir, 'cli.js')
  if (!statSync(cli, { throwIfNoEntry: false })) {
    // Several test workers may build at once: each builds into a folder of its own and renames it
    // into place; the first rename wins and the others' copies are dropped.
    const scratch = join(BUILDS, `tmp-${process.pid}-${Date.now()}`)
    mkdirSync(scratch, { recursive: true })
    try {
      buildSync({
        entryPoints: [
          join(service, 'src/cli.ts'),
          join(service, 'src/workers/cryptoWorker.ts'),
          ...Object.values(SCRIPTS),
        ],
        entryNames: '[name]',
        outdir: scratch,
        bundle: true,
        splitting: true,
        format: 'esm',
        platform: 'node',
        target: 'node20',
        packages: 'external',
        tsconfig: join(root, 'tsconfig.json'),
        logLevel: 'error',
      })
      renameSync(scratch, dir)
    } catch (error) {
      // Another worker's rename came first (its bundle is the same), or the build failed.
      rmSync(scratch, { recursive: true, force: true })
      if (!statSync(cli, { throwIfNoEntry: false })) throw error
    }
    pruneOldBuilds(dir)
  }
  entry = cli
  return cli
}

/** Builds of earlier states of the sources, left by earlier runs (not touched for ten minutes). */
function pruneOldBuilds(keep: string) {
  for (const name of readdirSync(BUILDS)) {
    const path = join(BUILDS, name)
    if (path === keep) continue
    try {
      if (Date.now() - statSync(path).mtimeMs > 10 * 60_000) rmSync(path, { recursive: true, force: true })
    } catch {}
  }
}

/** What follows `node` (and its own flags) to run the service's CLI: `[...loader, script]`. */
export function cliCommand(): string[] {
  if (process.env.LATCHKEY_TEST_CLI === 'tsx') return ['--import', 'tsx', join(service, 'src/cli.ts')]
  return [bundledCli()]
}

/** What follows `node` to run one of the test services: `[...loader, script]`. */
export function scriptCommand(script: TestScript): string[] {
  if (process.env.LATCHKEY_TEST_CLI === 'tsx') return ['--import', 'tsx', SCRIPTS[script]]
  return [join(dirname(bundledCli()), `${script}.js`)]
}
