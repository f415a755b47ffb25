// Node only: a local Solana JSON-RPC node for `latchkey-service dev --solana` and the tests: a
// LiteSVM instance (an in-process Solana runtime) behind a loopback HTTP server. LiteSVM comes from
// the npm registry on first use (installOnFirstUse.ts), like anvil for `--evm`.
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { base58, base64 } from '@scure/base'
import type { Address } from '@solana/addresses'
import { getCompiledTransactionMessageDecoder } from '@solana/transaction-messages'
import { getTransactionDecoder } from '@solana/transactions'
import type { LiteSVM } from 'litesvm'
import { precompileSignatures } from '../kernel/crypto/solanaFees.ts'
import { devToolDir, installOnFirstUse, resolvePackageDir } from './installOnFirstUse.ts'

/** The LiteSVM release `dev --solana` installs (the repository's devDependency pins the same). */
export const LITESVM_VERSION = '1.4.1'

/** LiteSVM's fee per signature (it charges no priority fee unless a compute-budget price is set). */
export const LAMPORTS_PER_SIGNATURE = 5000n

/** One SOL in lamports. */
export const LAMPORTS_PER_SOL = 1_000_000_000n

type LiteSvmModule = typeof import('litesvm')

export interface SolanaNode {
  svm: LiteSVM
  /** The loopback JSON-RPC endpoint. */
  url: string
  /** `solana:<first 32 characters of this node's genesis hash>`. */
  caip2: string
  /** JSON-RPC methods called so far, in order (a test checks nothing was broadcast). */
  calls: string[]
  balance(address: string): bigint
  /** Funds `address` with `amount` lamports; resolves with its balance after. */
  airdrop(address: string, amount: bigint): bigint
  close(): Promise<void>
}

export interface StartSolanaNodeOptions {
  /** Port on 127.0.0.1; 0 picks a free one. @default 0 */
  port?: number
  /** The folder LiteSVM is installed into when this package cannot resolve it. @default liteSvmDir() */
  dir?: string
  /** Told before LiteSVM is installed (first use only). */
  log?: (line: string) => void
}

/** Where `dev --solana` installs LiteSVM: `LATCHKEY_LITESVM_DIR`, else as devToolDir says. */
export function liteSvmDir(
  cwd: string = process.cwd(),
  env: Record<string, string | undefined> = process.env,
): string {
  return devToolDir(`latchkey-litesvm-${LITESVM_VERSION}`, { cwd, env, override: env.LATCHKEY_LITESVM_DIR })
}

/** LiteSVM as this package resolves it (the repository's copy), else from `dir`, installed there when missing. */
async function loadLiteSvm(options: StartSolanaNodeOptions): Promise<LiteSvmModule> {
  const dir = options.dir ?? liteSvmDir()
  const find = () =>
    resolvePackageDir('litesvm', import.meta.url) ?? resolvePackageDir('litesvm', join(dir, 'package.json'))
  let found = find()
  if (found === undefined) {
    installOnFirstUse({
      dir,
      dependencies: { litesvm: LITESVM_VERSION },
      what: `litesvm@${LITESVM_VERSION}`,
      log: options.log,
    })
    found = find()
    if (found === undefined) throw new Error(`litesvm is not installed in ${dir} after npm ran`)
  }
  // A computed URL: bundlers leave the native module alone.
  const entry = pathToFileURL(join(found, 'dist', 'index.js')).href
  const loaded = (await import(entry)) as LiteSvmModule & { default?: LiteSvmModule }
  return loaded.LiteSVM ? loaded : (loaded.default as LiteSvmModule)
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

/** A wire transaction (base64) as LiteSVM takes it. */
const decodeTransaction = (wire: string) =>
  getTransactionDecoder().decode(base64.decode(wire)) as unknown as Parameters<LiteSVM['sendTransaction']>[0]

/**
 * A loopback JSON-RPC server over a LiteSVM instance answering the methods the service's Solana
 * sends and a browser app's @solana/kit use: `getGenesisHash`, `getLatestBlockhash`,
 * `isBlockhashValid`, `getFeeForMessage`, `sendTransaction` (simulated first, like a node's
 * preflight, so a failing transaction is refused and costs nothing), `simulateTransaction`
 * (`sigVerify` as asked, default off), `getSignatureStatuses`, `getBalance`, `getSlot`,
 * `requestAirdrop`. Every transaction the SVM executes lands in its own slot and is at once
 * `finalized`. Browsers may call it (CORS: any origin; it listens on loopback only).
 */
export async function startSolanaNode(options: StartSolanaNodeOptions = {}): Promise<SolanaNode> {
  const { LiteSVM, FailedTransactionMetadata } = await loadLiteSvm(options)
  const svm = new LiteSVM()
  const genesisHash = base58.encode(randomBytes(32))
  const statuses = new Map<string, { slot: number; err: unknown }>()
  const calls: string[] = []
  let slot = 1
  const context = () => ({ slot })
  const bigintJson = (_: string, value: unknown) => (typeof value === 'bigint' ? Number(value) : value)
  const balance = (address: string) => svm.getBalance(address as Address as never) ?? 0n
  const airdrop = (address: string, amount: bigint) => {
    const result = svm.airdrop(address as never, amount as never)
    if (result instanceof FailedTransactionMetadata) throw new Error(`airdrop failed: ${result.toString()}`)
    return balance(address)
  }

  const methods: Record<string, (params: unknown[]) => unknown> = {
    getGenesisHash: () => genesisHash,
    getSlot: () => slot,
    getLatestBlockhash: () => ({
      context: context(),
      value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: slot + 150 },
    }),
    isBlockhashValid: ([blockhash]) => ({ context: context(), value: blockhash === svm.latestBlockhash() }),
    getFeeForMessage: ([message]) => {
      const compiled = getCompiledTransactionMessageDecoder().decode(base64.decode(message as string))
      if (String(compiled.lifetimeToken) !== svm.latestBlockhash()) return { context: context(), value: null }
      return {
        context: context(),
        // As Agave counts it: the transaction's signatures and those its precompiles verify.
        value: Number(
          LAMPORTS_PER_SIGNATURE *
            BigInt(
              compiled.header.numSignerAccounts +
                precompileSignatures(
                  ('instructions' in compiled ? compiled.instructions : []).map((ix) => ({
                    program: String(compiled.staticAccounts[ix.programAddressIndex] ?? ''),
                    data: (ix.data ?? new Uint8Array()) as Uint8Array,
                  })),
                ),
            ),
        ),
      }
    },
    getBalance: ([address]) => ({ context: context(), value: Number(balance(address as string)) }),
    requestAirdrop: ([address, amount]) => {
      airdrop(address as string, BigInt(amount as number))
      slot += 1
      const signature = base58.encode(randomBytes(64))
      statuses.set(signature, { slot, err: null })
      return signature
    },
    sendTransaction: ([wire]) => {
      const transaction = decodeTransaction(wire as string)
      const [first] = Object.values(transaction.signatures)
      const signature = base58.encode(first ?? new Uint8Array(64))
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
      const transaction = decodeTransaction(wire as string)
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
    // A browser app's @solana/kit calls the node from its own origin.
    response.setHeader('access-control-allow-origin', '*')
    if (request.method === 'OPTIONS') {
      response.setHeader('access-control-allow-methods', 'POST')
      response.setHeader('access-control-allow-headers', 'content-type, solana-client')
      response.statusCode = 204
      response.end()
      return
    }
    let body: unknown
    try {
      const {
        id,
        method,
        params = [],
      } = await readBody(request).catch(() => {
        throw new RpcError(-32700, 'Parse error: the body is not a JSON-RPC request')
      })
      calls.push(method)
      try {
        const handler = methods[method]
        if (!handler) throw new RpcError(-32601, `Method not found: ${method}`)
        body = { jsonrpc: '2.0', id, result: handler(params) }
      } catch (error) {
        const code = error instanceof RpcError ? error.code : -32603
        body = { jsonrpc: '2.0', id, error: { code, message: (error as Error).message } }
      }
    } catch (error) {
      body = { jsonrpc: '2.0', id: null, error: { code: -32700, message: (error as Error).message } }
    }
    response.setHeader('content-type', 'application/json')
    response.end(JSON.stringify(body, bigintJson))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  return {
    svm,
    url: `http://127.0.0.1:${port}`,
    caip2: `solana:${genesisHash.slice(0, 32)}`,
    calls,
    balance,
    airdrop,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

/** Funds `address` with `amount` lamports. */
export function airdrop(node: SolanaNode, address: string, amount: bigint): void {
  node.airdrop(address, amount)
}
