// The playground's side of the local EVM node: balance, faucet, and building an EIP-1559
// transfer whose signing hash Latchkey signs. Sending goes through Latchkey's
// `eth_send_raw_transaction` (the service broadcasts to this same node).
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { Transaction, weieth } from 'micro-eth-signer'

/** An EIP-1559 transaction (micro-eth-signer exports the class as a value only). */
export type Eip1559Transaction = ReturnType<typeof Transaction.prepare>

export interface EvmConfig {
  rpcUrl: string
  chainId: number
  caip2: string
  /** An unlocked, funded dev account of the node; the faucet sends from it. */
  faucetAccount: string
}

export class JsonRpcError extends Error {
  override name = 'JsonRpcError'
}

export async function jsonRpc<T>(rpcUrl: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  if (!response.ok) throw new JsonRpcError(`${method}: HTTP ${response.status}`)
  const body = (await response.json()) as { result?: T; error?: { message: string } }
  if (body.error) throw new JsonRpcError(`${method}: ${body.error.message}`)
  return body.result as T
}

export async function getBalance(evm: EvmConfig, address: string): Promise<bigint> {
  return BigInt(await jsonRpc<string>(evm.rpcUrl, 'eth_getBalance', [address, 'latest']))
}

/** Sends `ether` from the node's unlocked dev account to `address`; resolves with the tx hash. */
export async function faucet(evm: EvmConfig, address: string, ether = '1'): Promise<string> {
  return jsonRpc<string>(evm.rpcUrl, 'eth_sendTransaction', [
    { from: evm.faucetAccount, to: address, value: `0x${weieth.decode(ether).toString(16)}` },
  ])
}

export interface TransactionReceipt {
  transactionHash: string
  blockNumber: string
  status: string
  gasUsed: string
  from: string
  to: string
}

export async function waitForReceipt(
  evm: EvmConfig,
  hash: string,
  timeoutMs = 15_000,
): Promise<TransactionReceipt> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const receipt = await jsonRpc<TransactionReceipt | null>(evm.rpcUrl, 'eth_getTransactionReceipt', [hash])
    if (receipt) return receipt
    if (Date.now() > deadline)
      throw new JsonRpcError(`transaction ${hash} was not mined within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
}

export interface UnsignedTransfer {
  transaction: Eip1559Transaction
  /** keccak-256 of the unsigned serialisation: what the account's key signs. */
  signingHash: string
}

/** An EIP-1559 ETH transfer from `from` with the node's current nonce and fees. */
export async function prepareTransfer(
  evm: EvmConfig,
  from: string,
  to: string,
  ether: string,
): Promise<UnsignedTransfer> {
  const [nonce, block, tip] = await Promise.all([
    jsonRpc<string>(evm.rpcUrl, 'eth_getTransactionCount', [from, 'pending']),
    jsonRpc<{ baseFeePerGas?: string }>(evm.rpcUrl, 'eth_getBlockByNumber', ['latest', false]),
    jsonRpc<string>(evm.rpcUrl, 'eth_maxPriorityFeePerGas').catch(() => '0x3b9aca00'),
  ])
  const baseFee = BigInt(block.baseFeePerGas ?? '0x3b9aca00')
  const maxPriorityFeePerGas = BigInt(tip)
  const transaction = Transaction.prepare({
    to,
    value: weieth.decode(ether),
    nonce: BigInt(nonce),
    chainId: BigInt(evm.chainId),
    gasLimit: 21_000n,
    maxPriorityFeePerGas,
    maxFeePerGas: baseFee * 2n + maxPriorityFeePerGas,
  })
  const signingHash = `0x${bytesToHex(keccak_256(transaction.toBytes({ includeSignature: false })))}`
  return { transaction, signingHash }
}

/** The signed raw transaction from a `{ r, s, v }` signature over `signingHash`. */
export function attachSignature(
  unsigned: Eip1559Transaction,
  signature: { r: string; s: string; v: string },
): Eip1559Transaction {
  const v = BigInt(`0x${signature.v.replace(/^0x/, '')}`)
  const yParity = Number(v >= 27n ? v - 27n : v)
  const raw = {
    ...unsigned.raw,
    r: BigInt(`0x${signature.r.replace(/^0x/, '')}`),
    s: BigInt(`0x${signature.s.replace(/^0x/, '')}`),
    yParity,
  }
  // The raw fields keep the unsigned transaction's type; only the signature fields are added.
  const signed = new Transaction(unsigned.type, raw as never, { strict: false })
  if (!signed.verifySignature()) throw new Error('the signature does not verify against this transaction')
  return signed
}

export const formatEther = (wei: bigint) => {
  const text = weieth.encode(wei)
  const [whole, fraction = ''] = text.split('.')
  return fraction ? `${whole}.${fraction.slice(0, 4)}` : whole!
}
