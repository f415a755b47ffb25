// Node only: the dev tools `latchkey-service dev` runs beside the service (anvil for `--evm`,
// LiteSVM for `--solana`) come from the npm registry on first use, into a folder of their own, with
// no install script: an app that never asks for a local chain never pays for one.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'

/**
 * Where a dev tool goes: `override` when set (a shared or offline copy), else the app's
 * `node_modules/.cache` when the working directory has a `node_modules` (so it goes away with it),
 * else the user's cache folder.
 */
export function devToolDir(
  folder: string,
  { cwd = process.cwd(), env = process.env, override }: DevToolDirOptions = {},
): string {
  if (override) return override
  if (existsSync(join(cwd, 'node_modules'))) return join(cwd, 'node_modules', '.cache', folder)
  const cache = env.XDG_CACHE_HOME || join(homedir(), '.cache')
  return join(cache, 'latchkey', folder)
}

export interface DevToolDirOptions {
  cwd?: string
  env?: Record<string, string | undefined>
  /** The folder named by the tool's environment variable, when set. */
  override?: string | undefined
}

/** The directory of package `name` as resolved from `from` (a file URL or path); undefined when absent. */
export function resolvePackageDir(name: string, from: string): string | undefined {
  try {
    return dirname(createRequire(from).resolve(`${name}/package.json`))
  } catch {
    return undefined
  }
}

export interface InstallOptions {
  /** The folder to install into. */
  dir: string
  /** The manifest's dependencies, pinned (`{ litesvm: '1.4.1' }`). */
  dependencies: Record<string, string>
  /** `optionalDependencies` instead of `dependencies` (one package per platform, as anvil's). */
  optional?: boolean
  /** What is installed, for the log line and errors (`litesvm@1.4.1`). */
  what: string
  /** Told before an install starts (it takes a while the first time). */
  log?: ((line: string) => void) | undefined
}

/**
 * Installs `dependencies` into `dir` with npm: from its `package-lock.json` (`npm ci`) when there
 * is one, else from a `package.json` written here. Scripts are never run; npm's warnings (an engine
 * range of a dependency the tool does not use) are not shown, its errors are.
 */
export function installOnFirstUse(options: InstallOptions): void {
  const { dir, what } = options
  mkdirSync(dir, { recursive: true })
  const lockfile = existsSync(join(dir, 'package-lock.json'))
  if (!lockfile)
    writeFileSync(
      join(dir, 'package.json'),
      `${JSON.stringify({ name: 'latchkey-dev-tool', private: true, [options.optional ? 'optionalDependencies' : 'dependencies']: options.dependencies }, null, 2)}\n`,
    )
  options.log?.(`installing ${what} from the npm registry into ${dir} (first use only)`)
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const flags = ['--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error']
  try {
    execFileSync(npm, lockfile ? ['ci', ...flags] : ['install', '--no-package-lock', ...flags], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
      shell: process.platform === 'win32',
    })
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim()
    throw new Error(`could not install ${what} into ${dir}: ${stderr || (error as Error).message}`)
  }
}
