// Node only: a local EVM node (Foundry's anvil, see anvilBinary.ts) for `latchkey-service dev
// --evm`, `npm start` and the tests. Prague rules, so EIP-7702 (type-4) transactions execute.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { type AnvilBinaryOptions, anvilBinary } from './anvilBinary.ts'

export interface EvmNode {
  /** The node's JSON-RPC URL, `http://127.0.0.1:<port>`. */
  url: string
  chainId: number
  /** `eip155:<chainId>`. */
  caip2: string
  /** The ten unlocked, funded development accounts. */
  accounts: `0x${string}`[]
  /** One JSON-RPC call to the node; throws with the node's message on an error. */
  rpc(method: string, params?: unknown[]): Promise<unknown>
  /** The transaction's receipt once it is mined (polls; throws after `waitMs`, default 10 s). */
  waitForReceipt(hash: string, waitMs?: number): Promise<Record<string, unknown>>
  /** Stops the node and resolves once it exited. */
  close(): Promise<void>
  /** Stops the node without waiting (for a process `exit` handler, which cannot wait). */
  kill(): void
}

export interface StartEvmNodeOptions {
  /** Port on 127.0.0.1; 0 picks a free one. @default 0 */
  port?: number
  /** @default 31337 */
  chainId?: number
  /** How long anvil may take to listen. @default 20000 */
  timeoutMs?: number
  /** Where anvil is found or installed (anvilBinary's options). */
  anvil?: AnvilBinaryOptions
}

/** One JSON-RPC call; throws with the node's message on a JSON-RPC error. */
export async function jsonRpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const body = (await response.json()) as { result?: unknown; error?: { message: string } }
  if (body.error) throw new Error(`${method}: ${body.error.message}`)
  return body.result
}

/**
 * Starts anvil on 127.0.0.1: instant mining, Prague rules, ten funded accounts of the standard
 * development mnemonic ("test test … junk", 1000 ETH each, unlocked). Resolves once it listens.
 */
export async function startEvmNode(options: StartEvmNodeOptions = {}): Promise<EvmNode> {
  const { port = 0, chainId = 31337, timeoutMs = 20_000 } = options
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId)]
  args.push('--hardfork', 'prague', '--accounts', '10', '--balance', '1000')
  const child = spawn(anvilBinary(options.anvil), args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  // anvil prints its banner, then `Listening on 127.0.0.1:<port>`; the rest of stdout is drained.
  const listening = new Promise<string>((resolve, reject) => {
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
    void exited.then((code) => {
      clearTimeout(timer)
      const reason = stderr.trim() || `exit code ${code}`
      reject(new Error(`anvil exited before it listened: ${reason}`))
    })
  })
  let url: string
  try {
    url = await listening
  } catch (error) {
    child.kill('SIGKILL')
    throw error
  }
  const running = () => child.exitCode === null && child.signalCode === null
  const accounts = (await jsonRpc(url, 'eth_accounts')) as `0x${string}`[]
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
        if (receipt) return receipt as Record<string, unknown>
        if (Date.now() > deadline) throw new Error(`transaction ${hash} was not mined within ${waitMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    },
    async close() {
      if (running()) child.kill('SIGTERM')
      await exited
    },
    kill() {
      if (running()) child.kill('SIGTERM')
    },
  }
}
