// Installs Debian packages a test or script needs and the machine lacks (CI and new machines start
// without them): apt-get as root, or through `sudo -n` when allowed. Concurrent installs from
// parallel test workers wait for dpkg's lock instead of failing.
import { spawnSync } from 'node:child_process'

/**
 * `apt-get install` of `packages` (`what` names the caller in messages, `hint` says what to do
 * when installing is not possible). Runs `apt-get update` first only when the install fails for
 * want of package lists.
 */
export function aptInstall(packages, { what, hint }) {
  const asRoot = process.getuid?.() === 0
  let command = 'apt-get'
  let prefix = []
  if (!asRoot) {
    if (spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status !== 0)
      throw new Error(
        `${what}: ${packages.join(', ')} missing, and we are neither root nor allowed to sudo to apt-get install it; ${hint}`,
      )
    command = 'sudo'
    prefix = ['-n', 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get']
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  const run = (args, { quiet = false } = {}) => {
    const result = spawnSync(command, [...prefix, '-o', 'DPkg::Lock::Timeout=300', ...args], {
      env,
      stdio: ['ignore', 'ignore', quiet ? 'ignore' : 'inherit'],
    })
    return result.status === 0
      ? undefined
      : `\`${[command, ...prefix, ...args].join(' ')}\` failed (${result.status ?? result.signal})`
  }
  process.stderr.write(`${what}: installing Debian ${packages.join(' ')} with apt-get\n`)
  const install = ['install', '-y', '-qq', '--no-install-recommends', ...packages]
  if (run(install, { quiet: true }) === undefined) return
  const failed = run(['update', '-qq']) ?? run(install)
  if (failed) throw new Error(`${what}: ${failed}`)
}
