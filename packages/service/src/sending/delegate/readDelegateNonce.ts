import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import type { EthRpc } from './ethRpc.ts'

const NONCE_CALL = `0x${bytesToHex(keccak_256(utf8ToBytes('nonce()')).slice(0, 4))}`

/**
 * The batch nonce the account's next signed batch must carry (the delegate's `nonce()`, read at
 * `block`). An account with no code yet (not delegated) answers 0: its first sponsored batch
 * carries 0 and its authorization.
 */
export async function readDelegateNonce(rpc: EthRpc, account: string, block = 'latest'): Promise<bigint> {
  const result = await rpc('eth_call', [{ to: account, data: NONCE_CALL }, block])
  if (typeof result !== 'string' || !/^0x[0-9a-fA-F]*$/.test(result))
    throw new Error(`eth_call nonce(): unexpected result ${String(result).slice(0, 80)}`)
  if (result === '0x') return 0n
  if (result.length !== 66)
    throw new Error(`eth_call nonce(): expected one word, got ${result.length / 2 - 1} bytes`)
  return BigInt(result)
}
