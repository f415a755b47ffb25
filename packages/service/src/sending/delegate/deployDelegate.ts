import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { addr, Transaction } from 'micro-eth-signer'
import { delegateContract } from './delegateContract.ts'
import { type EthRpc, httpEthRpc } from './ethRpc.ts'

/**
 * The deterministic deployment proxy (CREATE2 factory) present on anvil, most public chains and
 * their testnets: `salt ‖ initCode` in, the created contract's address out.
 */
export const CREATE2_FACTORY = '0x4e59b44847b379578588920cA78FbF26c0B4956C'

const SALT = new Uint8Array(32)

/**
 * Where `deployDelegate` puts LatchkeyDelegate: the CREATE2 address of this bytecode through
 * `CREATE2_FACTORY` with a zero salt, the same on every chain that has the factory. It changes
 * whenever the contract's bytecode does.
 */
export const DELEGATE_ADDRESS = addr.getCreate2Address(
  CREATE2_FACTORY,
  SALT,
  keccak_256(hexToBytes(delegateContract.bytecode.slice(2))),
)

/** Options of `deployDelegate`. */
export interface DeployDelegateOptions {
  /** Gives up waiting for the deployment's receipt after this long. @default 30_000 */
  timeoutMs?: number
  /** @default globalThis.fetch */
  fetch?: typeof globalThis.fetch
}

async function waitForReceipt(rpc: EthRpc, hash: string, timeoutMs: number): Promise<{ status: string }> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const receipt = (await rpc('eth_getTransactionReceipt', [hash])) as { status: string } | null
    if (receipt) return receipt
    if (Date.now() > until) throw new Error(`deployment ${hash} not mined within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/**
 * Deploys LatchkeyDelegate at `DELEGATE_ADDRESS` from the account of `privateKey` (which pays the
 * gas) and resolves with that address once mined. Idempotent: when the code is already there,
 * nothing is sent. For tests, the playground and local nodes; a production deployment is an
 * operator's step.
 */
export async function deployDelegate(
  rpcUrl: string,
  privateKey: string,
  options: DeployDelegateOptions = {},
): Promise<string> {
  const rpc = httpEthRpc(rpcUrl, options.fetch ? { fetch: options.fetch } : {})
  if ((await rpc('eth_getCode', [DELEGATE_ADDRESS, 'latest'])) !== '0x') return DELEGATE_ADDRESS
  if ((await rpc('eth_getCode', [CREATE2_FACTORY, 'latest'])) === '0x')
    throw new Error(`no CREATE2 factory at ${CREATE2_FACTORY} on ${rpcUrl}`)
  const from = addr.fromPrivateKey(privateKey)
  const data = `0x${bytesToHex(SALT)}${delegateContract.bytecode.slice(2)}`
  const [chainId, nonce, gasLimit, block, tip] = await Promise.all([
    rpc('eth_chainId', []),
    rpc('eth_getTransactionCount', [from, 'pending']),
    rpc('eth_estimateGas', [{ from, to: CREATE2_FACTORY, data }]),
    rpc('eth_getBlockByNumber', ['latest', false]) as Promise<{ baseFeePerGas?: string }>,
    rpc('eth_maxPriorityFeePerGas', []),
  ])
  const maxPriorityFeePerGas = BigInt(tip as string)
  const transaction = Transaction.prepare({
    to: CREATE2_FACTORY,
    value: 0n,
    data,
    nonce: BigInt(nonce as string),
    chainId: BigInt(chainId as string),
    gasLimit: (BigInt(gasLimit as string) * 6n) / 5n,
    maxPriorityFeePerGas,
    maxFeePerGas: 2n * BigInt(block.baseFeePerGas ?? '0x0') + maxPriorityFeePerGas,
  }).signBy(privateKey)
  const hash = (await rpc('eth_sendRawTransaction', [transaction.toHex()])) as string
  const receipt = await waitForReceipt(rpc, hash, options.timeoutMs ?? 30_000)
  if (receipt.status !== '0x1') throw new Error(`deployment ${hash} reverted`)
  if ((await rpc('eth_getCode', [DELEGATE_ADDRESS, 'latest'])) === '0x')
    throw new Error(`deployment ${hash} left no code at ${DELEGATE_ADDRESS}`)
  return DELEGATE_ADDRESS
}
