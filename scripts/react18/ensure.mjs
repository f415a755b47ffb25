// Installs React 18.3 into scripts/react18/node_modules (from its lockfile) unless it is already
// there: the `dom-react18` vitest project and the React 18 e2e resolve `react`/`react-dom` to it.
// It is not in the root manifest because react-dom 18's peer range conflicts with the root's React 19.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const dir = path.dirname(fileURLToPath(import.meta.url))
const wanted = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).dependencies
const installed = (name) => {
  const file = path.join(dir, 'node_modules', name, 'package.json')
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version : undefined
}
if (Object.entries(wanted).some(([name, version]) => installed(name) !== version)) {
  process.stderr.write('react18: installing React 18.3 into scripts/react18/node_modules\n')
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  execFileSync(npm, ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: dir, stdio: 'inherit' })
}
