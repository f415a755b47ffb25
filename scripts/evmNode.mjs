// The local EVM node of `npm start`, the e2e runner and the tests: Foundry's anvil, from the npm
// registry (@foundry-rs/anvil ships the binary in a per-platform package, so nothing is downloaded
// from elsewhere and no install script has to run). Prague hardfork: it executes EIP-7702 (type-4)
// transactions, which ganache 7 (archived, stops at Cancun) cannot.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import path from 'node:path'

const require = createRequire(import.meta.url)

/** The anvil binary of this platform's @foundry-rs/anvil-<os>-<arch> package. */
export function anvilBinary() {
  const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch]
  const name = `@foundry-rs/anvil-${process.platform}-${arch}`
  let dir
  try {
    dir = path.dirname(require.resolve(`${name}/package.json`))
  } catch {
    throw new Error(`${name} is not installed: run npm install (anvil has no build for this platform)`)
  }
  return path.join(dir, 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil')
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

async function rpc(url, method, params = []) {
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
 * Starts anvil on 127.0.0.1: instant mining, Prague rules, ten funded accounts of the standard
 * development mnemonic ("test test … junk", 1000 ETH each, unlocked, so a faucet can
 * `eth_sendTransaction` from one). Resolves once it answers JSON-RPC; `close()` stops it.
 */
export async function startEvmNode({ port = 0, chainId = 31337, timeoutMs = 20_000 } = {}) {
  const chosen = port || (await freePort())
  const child = spawn(
    anvilBinary(),
    [
      '--host',
      '127.0.0.1',
      '--port',
      String(chosen),
      '--chain-id',
      String(chainId),
      '--hardfork',
      'prague',
      '--accounts',
      '10',
      '--balance',
      '1000',
      '--silent',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  let stderr = ''
  child.stderr.on('data', (chunk) => {
    stderr += chunk
  })
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)))
  const url = `http://127.0.0.1:${chosen}`
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child.exitCode !== null) throw new Error(`anvil exited (${child.exitCode}): ${stderr.trim()}`)
    try {
      await rpc(url, 'eth_chainId')
      break
    } catch {}
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`anvil did not answer on ${url} within ${timeoutMs} ms: ${stderr.trim()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const accounts = await rpc(url, 'eth_accounts')
  return {
    url,
    chainId,
    caip2: `eip155:${chainId}`,
    accounts,
    async close() {
      if (child.exitCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
