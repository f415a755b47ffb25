import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import type { Runtime } from '../kernel/Runtime.ts'
import { RpcRefusedError, type SendRpc } from './sendRpc.ts'

/**
 * OP Stack chains (OP Mainnet, Base and the rest of the Superchain) charge the sender of every
 * transaction an L1 data fee beside its L2 gas, which no field of the transaction caps: it
 * follows the L1's base and blob fees and the transaction's size. The chain's `GasPriceOracle`
 * predeploy at this address prices it.
 */
export const GAS_PRICE_ORACLE = '0x420000000000000000000000000000000000000F'

const selector = (signature: string) => bytesToHex(keccak_256(utf8ToBytes(signature)).slice(0, 4))
const word = (value: bigint | number) => BigInt(value).toString(16).padStart(64, '0')

/**
 * How much more than the oracle's bound at signing a send's L1 data fee is counted at: the
 * oracle follows the L1's fees, each of which rises by at most 12.5% an L1 block, so the fee
 * doubles in no fewer than six L1 blocks (72 s), longer than a send takes to be mined.
 */
export const L1_FEE_HEADROOM = 2n

/**
 * The bytes an unsigned EVM transaction with `dataBytes` of data takes, bounded from above: the
 * type, the list's header, chain id, nonce, both fees, gas limit, destination, value and the
 * empty access list take at most 200 bytes; an EIP-7702 authorization at most 120 more.
 */
export function unsignedSizeBound(dataBytes: number, authorizations = 0): number {
  return dataBytes + 200 + 120 * authorizations
}

/** Whether each chain (by CAIP-2 id) has the oracle, per runtime: asked once, answered by the node. */
const known = new WeakMap<Runtime, Map<string, Promise<boolean>>>()

/**
 * The most the L1 data fee of a transaction of `unsignedSize` bytes (`unsignedSizeBound`) can
 * cost its sender on `caip2` now, wei: the oracle's `getL1FeeUpperBound` (OP Stack since Fjord),
 * or, on an older oracle, its `getL1Fee` of as many non-zero bytes (the costliest data of that
 * length); 0 on a chain without the oracle (its code is empty: no L1 data fee). Outside any
 * transaction: it asks the node.
 */
export async function l1DataFeeBound(
  runtime: Runtime,
  rpc: SendRpc,
  caip2: string,
  unsignedSize: number,
): Promise<bigint> {
  const chains = known.get(runtime) ?? new Map<string, Promise<boolean>>()
  known.set(runtime, chains)
  let hasOracle = chains.get(caip2)
  if (!hasOracle) {
    hasOracle = (rpc('eth_getCode', [GAS_PRICE_ORACLE, 'latest']) as Promise<string>).then(
      (code) => typeof code === 'string' && code.length > 2,
    )
    chains.set(caip2, hasOracle)
    // An unreachable node answers nothing: ask again next time.
    hasOracle.catch(() => chains.delete(caip2))
  }
  if (!(await hasOracle)) return 0n
  const call = (data: string) =>
    rpc('eth_call', [{ to: GAS_PRICE_ORACLE, data }, 'latest']) as Promise<string>
  let answer: string
  try {
    answer = await call(`0x${selector('getL1FeeUpperBound(uint256)')}${word(unsignedSize)}`)
  } catch (error) {
    if (!(error instanceof RpcRefusedError)) throw error
    // Before Fjord the oracle has no upper bound: the fee of as long a transaction of 0xff bytes
    // (the signature's 68 included), which no data of that length exceeds.
    const length = unsignedSize + 68
    const padded = 'ff'.repeat(length).padEnd(Math.ceil(length / 32) * 64, '0')
    answer = await call(`0x${selector('getL1Fee(bytes)')}${word(32)}${word(length)}${padded}`)
  }
  return BigInt(answer)
}
