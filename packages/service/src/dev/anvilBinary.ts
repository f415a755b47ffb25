// Node only: Foundry's anvil from the npm registry. Its binary ships in one npm package per
// platform (`@foundry-rs/anvil-<os>-<arch>`), installed into a folder of its own on first use with
// no install script, so nothing is downloaded from anywhere but the configured registry.
import { join } from 'node:path'
import { devToolDir, installOnFirstUse, resolvePackageDir } from './installOnFirstUse.ts'

/** The anvil release `latchkey-service dev --evm` installs (the repository's scripts/anvil pins the same). */
export const ANVIL_VERSION = '1.7.1'

/** This platform's anvil package, e.g. `@foundry-rs/anvil-linux-amd64`; undefined where anvil has no build. */
export function anvilPackage(
  platform: string = process.platform,
  arch: string = process.arch,
): string | undefined {
  const cpu = ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[arch]
  if (cpu === undefined || !['linux', 'darwin', 'win32'].includes(platform)) return undefined
  return `@foundry-rs/anvil-${platform}-${cpu}`
}

/**
 * Where the service installs anvil for an app: `LATCHKEY_ANVIL_DIR` when set (a shared or offline
 * copy), else the app's `node_modules/.cache` when the working directory has a `node_modules` (so
 * it goes away with it), else the user's cache folder.
 */
export function defaultAnvilDir(
  cwd: string = process.cwd(),
  env: Record<string, string | undefined> = process.env,
): string {
  return devToolDir(`latchkey-anvil-${ANVIL_VERSION}`, { cwd, env, override: env.LATCHKEY_ANVIL_DIR })
}

export interface AnvilBinaryOptions {
  /**
   * The folder anvil is installed into on first use. With a `package-lock.json` there it is
   * installed from that lockfile (`npm ci`); without one a `package.json` pinning
   * {@link ANVIL_VERSION} is written and installed.
   * @default defaultAnvilDir()
   */
  dir?: string
  /** Told before an install starts (it takes a while the first time). */
  log?: (line: string) => void
}

/**
 * The path of this platform's anvil binary. An anvil package the app installed itself is used
 * first; otherwise the one in `dir`, installed there when missing.
 */
export function anvilBinary(options: AnvilBinaryOptions = {}): string {
  const name = anvilPackage()
  if (name === undefined)
    throw new Error(
      `anvil has no npm build for ${process.platform}-${process.arch}; run your own node and pass --rpc`,
    )
  const dir = options.dir ?? defaultAnvilDir()
  const binary = (packageDir: string) =>
    join(packageDir, 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil')
  const resolveFrom = (from: string) => {
    const found = resolvePackageDir(name, from)
    return found === undefined ? undefined : binary(found)
  }
  const found = resolveFrom(import.meta.url) ?? resolveFrom(join(dir, 'package.json'))
  if (found !== undefined) return found
  installOnFirstUse({
    dir,
    dependencies: { [name]: ANVIL_VERSION },
    optional: true,
    what: `${name}@${ANVIL_VERSION}`,
    log: options.log,
  })
  const installed = resolveFrom(join(dir, 'package.json'))
  if (installed === undefined) throw new Error(`${name} is not installed in ${dir} after npm ran`)
  return installed
}
