// The local EVM node of `npm start`, the e2e runner and the tests: Foundry's anvil, from the npm
// registry: its binary comes in a per-platform npm package, installed into scripts/anvil on first
// use (nothing is downloaded from elsewhere, no install script runs). Prague hardfork: it executes EIP-7702 (type-4)
// transactions, which ganache 7 (archived, stops at Cancun) cannot.
import { execFileSync, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

const anvilDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'anvil')
const require = createRequire(path.join(anvilDir, 'package.json'))

/**
 * The anvil binary of this platform's @foundry-rs/anvil-<os>-<arch> package, installed into
 * scripts/anvil/node_modules from its own lockfile on first use (no install script runs).
 */
export function anvilBinary() {
  const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch]
  const name = `@foundry-rs/anvil-${process.platform}-${arch}`
  const resolve = () => path.dirname(require.resolve(`${name}/package.json`))
  let dir
  try {
    dir = resolve()
  } catch {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    execFileSync(npm, ['ci', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], {
      cwd: anvilDir,
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    try {
      dir = resolve()
    } catch {
      throw new Error(`${name} is not installed: anvil has no build for this platform in scripts/anvil`)
    }
  }
  return path.join(dir, 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil')
}

/** One JSON-RPC call; throws with the node's message on a JSON-RPC error. */
export async function jsonRpc(url, method, params = []) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const body = await response.json()
  if (body.error) throw new Error(`${method}: ${body.error.message}`)
  return body.result
}

/**
 * Starts anvil on 127.0.0.1 (`port` 0: a free one): instant mining, Prague rules, ten funded
 * accounts of the standard development mnemonic ("test test … junk", 1000 ETH each, unlocked, so
 * a faucet can `eth_sendTransaction` from one). Resolves once it listens; `close()` stops it.
 */
export async function startEvmNode({ port = 0, chainId = 31337, timeoutMs = 20_000 } = {}) {
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId)]
  args.push('--hardfork', 'prague', '--accounts', '10', '--balance', '1000')
  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  let stderr = ''
  child.stderr.on('data', (chunk) => {
    stderr += chunk
  })
  // anvil prints its banner, then `Listening on 127.0.0.1:<port>`; the rest of stdout is drained.
  const listening = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`anvil did not listen within ${timeoutMs} ms`)),
      timeoutMs,
    )
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /^Listening on (\S+)$/.exec(line.trim())
      if (match) {
        clearTimeout(timer)
        resolve(`http://${match[1]}`)
      }
    })
    exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`anvil exited (${code}): ${stderr.trim()}`))
    })
  })
  let url
  try {
    url = await listening
  } catch (error) {
    child.kill('SIGKILL')
    throw error
  }
  const accounts = await jsonRpc(url, 'eth_accounts')
  return {
    url,
    chainId,
    caip2: `eip155:${chainId}`,
    accounts,
    rpc: (method, params = []) => jsonRpc(url, method, params),
    // Automine is quick but not synchronous with eth_sendRawTransaction's answer.
    async waitForReceipt(hash, waitMs = 10_000) {
      const deadline = Date.now() + waitMs
      for (;;) {
        const receipt = await jsonRpc(url, 'eth_getTransactionReceipt', [hash])
        if (receipt) return receipt
        if (Date.now() > deadline) throw new Error(`transaction ${hash} was not mined within ${waitMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
