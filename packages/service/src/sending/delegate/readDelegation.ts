import type { EthRpc } from './ethRpc.ts'

/** EIP-7702 delegation indicator: the code an EOA holds once delegated, followed by the address. */
const DELEGATION_PREFIX = '0xef0100'

/**
 * The contract `account` delegates to (EIP-7702), lower-case, or null when its code is empty. A
 * sponsor includes an authorization in its type-4 transaction only when this is not the delegate.
 * Throws when the account holds other code: it is a contract, which cannot sign a batch.
 */
export async function readDelegation(rpc: EthRpc, account: string, block = 'latest'): Promise<string | null> {
  const code = await rpc('eth_getCode', [account, block])
  if (typeof code !== 'string') throw new Error(`eth_getCode: unexpected result ${String(code).slice(0, 80)}`)
  if (code === '0x') return null
  const lower = code.toLowerCase()
  if (lower.startsWith(DELEGATION_PREFIX) && lower.length === DELEGATION_PREFIX.length + 40)
    return `0x${lower.slice(DELEGATION_PREFIX.length)}`
  throw new Error(`${account} holds contract code, not an EIP-7702 delegation`)
}
