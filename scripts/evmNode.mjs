// The local EVM node of `npm start`, the e2e runner and the tests: Foundry's anvil, from the npm
// registry, installed into scripts/anvil from its own lockfile on first use (nothing is downloaded
// from elsewhere, no install script runs). Prague hardfork: it executes EIP-7702 (type-4)
// transactions, which ganache 7 (archived, stops at Cancun) cannot. The implementation is the
// service's (`latchkey-service dev --evm` starts the same node for an app); this file only points
// it at scripts/anvil.
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const anvilDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'anvil')

/**
 * The service's devChain module. Vitest and tsx load TypeScript themselves; plain Node 20
 * (`npm start`, the e2e runner) goes through tsx's loader.
 */
async function devChain() {
  try {
    return await import('../packages/service/src/dev/startEvmNode.ts')
  } catch (error) {
    if (error?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error
  }
  const { tsImport } = await import('tsx/esm/api')
  return tsImport('../packages/service/src/dev/startEvmNode.ts', import.meta.url)
}

/** One JSON-RPC call; throws with the node's message on a JSON-RPC error. */
export async function jsonRpc(url, method, params = []) {
  return (await devChain()).jsonRpc(url, method, params)
}

/**
 * Starts anvil on 127.0.0.1 (`port` 0: a free one): instant mining, Prague rules, ten funded
 * accounts of the standard development mnemonic ("test test … junk", 1000 ETH each, unlocked, so
 * a faucet can `eth_sendTransaction` from one). Resolves once it listens; `close()` stops it.
 */
export async function startEvmNode({ port = 0, chainId = 31337, timeoutMs = 20_000 } = {}) {
  return (await devChain()).startEvmNode({ port, chainId, timeoutMs, anvil: { dir: anvilDir } })
}
