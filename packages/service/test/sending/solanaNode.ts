import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  type Address,
  getBase58Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  lamports,
} from '@solana/kit'
import { FailedTransactionMetadata, LiteSVM } from 'litesvm'

/** LiteSVM's fee per signature (it charges no priority fee unless a compute-budget price is set). */
export const LAMPORTS_PER_SIGNATURE = 5000n

export interface SolanaNode {
  svm: LiteSVM
  /** The loopback JSON-RPC endpoint. */
  url: string
  /** `solana:<first 32 characters of this node's genesis hash>`. */
  caip2: string
  /** JSON-RPC methods called so far, in order (a test checks nothing was broadcast). */
  calls: string[]
  balance(address: string): bigint
  close(): Promise<void>
}

const readBody = async (request: IncomingMessage) => {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
    id: number
    method: string
    params?: unknown[]
  }
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * A loopback JSON-RPC server over a LiteSVM instance answering the methods the service's Solana
 * sends use: `getGenesisHash`, `getLatestBlockhash`, `isBlockhashValid`, `getFeeForMessage`,
 * `sendTransaction` (simulated first, like a node's preflight, so a failing transaction is refused
 * and costs nothing), `simulateTransaction` (`sigVerify` as asked, default off), `getSignatureStatuses`, `getBalance`, `getSlot`. Every transaction the SVM
 * executes lands in its own slot and is at once `finalized`.
 */
export async function startSolanaNode(): Promise<SolanaNode> {
  const svm = new LiteSVM()
  const genesisHash = getBase58Decoder().decode(randomBytes(32))
  const statuses = new Map<string, { slot: number; err: unknown }>()
  const calls: string[] = []
  let slot = 1
  const context = () => ({ slot })
  const bigintJson = (_: string, value: unknown) => (typeof value === 'bigint' ? Number(value) : value)

  const methods: Record<string, (params: unknown[]) => unknown> = {
    getGenesisHash: () => genesisHash,
    getSlot: () => slot,
    getLatestBlockhash: () => ({
      context: context(),
      value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: slot + 150 },
    }),
    isBlockhashValid: ([blockhash]) => ({ context: context(), value: blockhash === svm.latestBlockhash() }),
    getFeeForMessage: ([message]) => {
      const bytes = getBase64Encoder().encode(message as string)
      const compiled = getCompiledTransactionMessageDecoder().decode(bytes)
      if (String(compiled.lifetimeToken) !== svm.latestBlockhash()) return { context: context(), value: null }
      return {
        context: context(),
        value: Number(LAMPORTS_PER_SIGNATURE * BigInt(compiled.header.numSignerAccounts)),
      }
    },
    getBalance: ([address]) => ({
      context: context(),
      value: Number(svm.getBalance(address as Address) ?? 0n),
    }),
    sendTransaction: ([wire]) => {
      const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire as string))
      const [first] = Object.values(transaction.signatures)
      const signature = getBase58Decoder().decode(first ?? new Uint8Array(64))
      if (statuses.has(signature)) throw new RpcError(-32002, 'This transaction has already been processed')
      const simulated = svm.simulateTransaction(transaction)
      if (simulated instanceof FailedTransactionMetadata)
        throw new RpcError(-32002, `Transaction simulation failed: ${simulated.toString()}`)
      const result = svm.sendTransaction(transaction)
      slot += 1
      statuses.set(signature, {
        slot,
        err: result instanceof FailedTransactionMetadata ? { failed: result.err().toString() } : null,
      })
      return signature
    },
    simulateTransaction: ([wire, config]) => {
      const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire as string))
      const sigVerify = (config as { sigVerify?: boolean } | undefined)?.sigVerify ?? false
      svm.withSigverify(sigVerify)
      try {
        const simulated = svm.simulateTransaction(transaction)
        const failed = simulated instanceof FailedTransactionMetadata
        const meta = simulated.meta()
        return {
          context: context(),
          value: {
            err: failed ? { failed: simulated.err().toString() } : null,
            logs: meta.logs(),
            unitsConsumed: Number(meta.computeUnitsConsumed()),
          },
        }
      } finally {
        svm.withSigverify(true)
      }
    },
    getSignatureStatuses: ([signatures]) => ({
      context: context(),
      value: (signatures as string[]).map((signature) => {
        const status = statuses.get(signature)
        return status
          ? { slot: status.slot, confirmations: null, err: status.err, confirmationStatus: 'finalized' }
          : null
      }),
    }),
  }

  const server = createServer(async (request, response) => {
    const { id, method, params = [] } = await readBody(request)
    calls.push(method)
    let body: unknown
    try {
      const handler = methods[method]
      if (!handler) throw new RpcError(-32601, `Method not found: ${method}`)
      body = { jsonrpc: '2.0', id, result: handler(params) }
    } catch (error) {
      body = {
        jsonrpc: '2.0',
        id,
        error: { code: error instanceof RpcError ? error.code : -32603, message: (error as Error).message },
      }
    }
    response.setHeader('content-type', 'application/json')
    response.end(JSON.stringify(body, bigintJson))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    svm,
    url: `http://127.0.0.1:${port}`,
    caip2: `solana:${genesisHash.slice(0, 32)}`,
    calls,
    balance: (address) => svm.getBalance(address as Address) ?? 0n,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/** Funds `address` with `amount` lamports. */
export function airdrop(node: SolanaNode, address: string, amount: bigint): void {
  const result = node.svm.airdrop(address as Address, lamports(amount))
  if (result instanceof FailedTransactionMetadata) throw new Error(`airdrop failed: ${result.toString()}`)
}
