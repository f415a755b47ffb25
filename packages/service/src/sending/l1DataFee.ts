import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import type { Runtime } from '../kernel/Runtime.ts'
import { RpcRefusedError, rpcQuantity, type SendRpc } from './sendRpc.ts'

/**
 * OP Stack chains (OP Mainnet, Base and the rest of the Superchain) charge the sender of every
 * transaction an L1 data fee beside its L2 gas, which no field of the transaction caps: it
 * follows the L1's base and blob fees and the transaction's size. The chain's `GasPriceOracle`
 * predeploy at this address prices it, and since Isthmus the operator fee too (`operatorFeeBound`).
 */
export const GAS_PRICE_ORACLE = '0x420000000000000000000000000000000000000F'

/**
 * Scroll (and chains built on its stack) charge an L1 data fee too, priced by its
 * `L1GasPriceOracle` predeploy at this address: `getL1Fee(bytes)` of the signed transaction. Its
 * formula changed with each upgrade (by zero and non-zero bytes before Curie; by length after;
 * with a penalty for data that compresses badly after Feynman; by the zstd-compressed length,
 * never more than the raw length, after Galileo), and no field of the transaction caps it.
 */
export const SCROLL_L1_GAS_PRICE_ORACLE = '0x5300000000000000000000000000000000000002'

const selector = (signature: string) => bytesToHex(keccak_256(utf8ToBytes(signature)).slice(0, 4))
const word = (value: bigint | number) => BigInt(value).toString(16).padStart(64, '0')

/**
 * How much more than the oracle's bound at signing a send's L1 data fee is counted at: the
 * oracle follows the L1's fees, each of which rises by at most 12.5% an L1 block, so the fee
 * doubles in no fewer than six L1 blocks (72 s), longer than a send takes to be mined.
 */
export const L1_FEE_HEADROOM = 2n

/** The bytes a signature adds to an unsigned transaction, at most (as the OP oracle counts it). */
const SIGNATURE_BYTES = 68

/**
 * The bytes an unsigned EVM transaction with `dataBytes` of data takes, bounded from above: the
 * type, the list's header, chain id, nonce, both fees, gas limit, destination, value and the
 * empty access list take at most 200 bytes; an EIP-7702 authorization at most 120 more.
 */
export function unsignedSizeBound(dataBytes: number, authorizations = 0): number {
  return dataBytes + 200 + 120 * authorizations
}

/**
 * `length` bytes that no compressor shrinks: a keccak stream, with no zero byte (a byte-counting
 * oracle charges those less) and no byte the same as the one before it (nothing for a run-length
 * coder either). An oracle that prices a transaction by its compressed size (Scroll since Feynman
 * and Galileo) or by its non-zero bytes (before) charges no data of that length more; one byte
 * repeated would compress to almost nothing and be priced far under a caller's random calldata.
 */
export function incompressibleBytes(length: number): string {
  const bytes = new Uint8Array(length)
  for (let block = 0; block * 32 < length; block++)
    bytes.set(
      keccak_256(utf8ToBytes(`latchkey l1 fee bound ${block}`)).subarray(0, length - block * 32),
      block * 32,
    )
  for (let i = 0; i < length; i++)
    while (bytes[i] === 0 || (i > 0 && bytes[i] === bytes[i - 1])) bytes[i] = (bytes[i]! + 1) & 0xff
  return bytesToHex(bytes)
}

/** Which oracle a chain has: OP Stack's, Scroll's, or none (no L1 data fee). */
type Oracle = 'op' | 'scroll' | 'none'

/** Each chain's oracle (by CAIP-2 id), per runtime: asked once, answered by the node. */
const known = new WeakMap<Runtime, Map<string, Promise<Oracle>>>()

/** The oracle `caip2` carries, by the code at each predeploy's address (asked once). */
function oracleOf(runtime: Runtime, rpc: SendRpc, caip2: string): Promise<Oracle> {
  const chains = known.get(runtime) ?? new Map<string, Promise<Oracle>>()
  known.set(runtime, chains)
  let oracle = chains.get(caip2)
  if (!oracle) {
    const hasCode = (address: string) =>
      (rpc('eth_getCode', [address, 'latest']) as Promise<string>).then(
        (code) => typeof code === 'string' && code.length > 2,
      )
    oracle = Promise.all([hasCode(GAS_PRICE_ORACLE), hasCode(SCROLL_L1_GAS_PRICE_ORACLE)]).then(
      ([op, scroll]): Oracle => (op ? 'op' : scroll ? 'scroll' : 'none'),
    )
    chains.set(caip2, oracle)
    // An unreachable node answers nothing: ask again next time.
    oracle.catch(() => chains.delete(caip2))
  }
  return oracle
}

/** An oracle's answer as a number: a node's answer that is not one is an error, never 0. */
function quantity(answer: unknown): bigint {
  const value = rpcQuantity(answer)
  if (value === undefined) throw new Error('the oracle answered something that is not a number')
  return value
}

/** An ABI call of `signature` with one `bytes` argument of `hex`. */
const bytesCall = (signature: string, hex: string) => {
  const length = hex.length / 2
  return `0x${selector(signature)}${word(32)}${word(length)}${hex.padEnd(Math.ceil(length / 32) * 64, '0')}`
}

/**
 * The most the L1 data fee of a transaction of `unsignedSize` bytes (`unsignedSizeBound`) can
 * cost its sender on `caip2` now, wei. On an OP Stack chain: the oracle's `getL1FeeUpperBound`
 * (since Fjord), or, on an older oracle, its `getL1Fee` of as long a signed transaction of
 * incompressible non-zero bytes (the costliest data of that length). On a Scroll chain: its
 * oracle's `getL1Fee` of such bytes, as long as the signed transaction (since Galileo it prices
 * the compressed transaction, never longer than that; since Feynman it counts the penalty for
 * badly compressing data, which such bytes pay). 0 on a chain without either oracle (its code is
 * empty: no L1 data fee). Outside any transaction: it asks the node.
 */
export async function l1DataFeeBound(
  runtime: Runtime,
  rpc: SendRpc,
  caip2: string,
  unsignedSize: number,
): Promise<bigint> {
  const oracle = await oracleOf(runtime, rpc, caip2)
  if (oracle === 'none') return 0n
  const worst = incompressibleBytes(unsignedSize + SIGNATURE_BYTES)
  if (oracle === 'scroll')
    return quantity(
      await rpc('eth_call', [
        { to: SCROLL_L1_GAS_PRICE_ORACLE, data: bytesCall('getL1Fee(bytes)', worst) },
        'latest',
      ]),
    )
  const call = (data: string) => rpc('eth_call', [{ to: GAS_PRICE_ORACLE, data }, 'latest'])
  let answer: unknown
  try {
    answer = await call(`0x${selector('getL1FeeUpperBound(uint256)')}${word(unsignedSize)}`)
  } catch (error) {
    if (!(error instanceof RpcRefusedError)) throw error
    // Before Fjord the oracle has no upper bound: the fee of as long a signed transaction of
    // bytes that are all non-zero, which no data of that length exceeds.
    answer = await call(bytesCall('getL1Fee(bytes)', worst))
  }
  return quantity(answer)
}

/**
 * How long a chain whose OP oracle has no `getOperatorFee` (before Isthmus) is taken to charge no
 * operator fee before it is asked again: the predeploy gains the function when the chain upgrades.
 */
export const OPERATOR_FEE_RECHECK_MS = 10 * 60_000

/** Until when each chain's oracle is known to lack `getOperatorFee` (runtime clock), per runtime. */
const withoutOperatorFee = new WeakMap<Runtime, Map<string, number>>()

/**
 * The most the operator fee of a transaction with `gasLimit` can cost its sender on `caip2` now,
 * wei: an OP Stack chain since Isthmus charges it beside the gas and the L1 data fee, on the gas
 * used (`operatorFeeScalar` and `operatorFeeConstant`, set by the chain's operator; scaled down by
 * 1e6 under Isthmus, up by 100 since Jovian), and the oracle's `getOperatorFee` of the gas limit
 * prices the most any gas used can cost. 0 on a chain without the OP oracle, and on an oracle
 * without the function (before Isthmus: it reverts), which is asked again only after
 * `OPERATOR_FEE_RECHECK_MS`. Outside any transaction: it asks the node.
 */
export async function operatorFeeBound(
  runtime: Runtime,
  rpc: SendRpc,
  caip2: string,
  gasLimit: bigint,
): Promise<bigint> {
  if ((await oracleOf(runtime, rpc, caip2)) !== 'op') return 0n
  const absent = withoutOperatorFee.get(runtime) ?? new Map<string, number>()
  withoutOperatorFee.set(runtime, absent)
  const until = absent.get(caip2)
  if (until !== undefined && runtime.now() < until) return 0n
  let answer: unknown
  try {
    answer = await rpc('eth_call', [
      { to: GAS_PRICE_ORACLE, data: `0x${selector('getOperatorFee(uint256)')}${word(gasLimit)}` },
      'latest',
    ])
  } catch (error) {
    // Only a revert says the function is not there; a node's other refusal (rate limits, a
    // method it does not serve) is its failure, not an operator fee of 0.
    if (!(error instanceof RpcRefusedError) || !/revert/i.test(error.nodeText)) throw error
    absent.set(caip2, runtime.now() + OPERATOR_FEE_RECHECK_MS)
    return 0n
  }
  absent.delete(caip2)
  return quantity(answer)
}

/**
 * What a mined transaction paid in operator fee, wei, as an OP Stack node's receipt says it: the
 * receipt carries the block's `operatorFeeScalar` and `operatorFeeConstant` where either is not 0
 * (from Isthmus), and `daFootprintGasScalar` from Jovian, whose formula differs. A receipt that
 * reports `l1Fee` (an OP Stack or Scroll node's) without them paid none. Undefined where the
 * receipt says nothing of it (the node reports no L1 fee either): what was counted stands.
 */
export function operatorFeePaid(
  receipt: {
    l1Fee?: unknown
    operatorFeeScalar?: unknown
    operatorFeeConstant?: unknown
    daFootprintGasScalar?: unknown
  },
  gasUsed: bigint,
): bigint | undefined {
  const scalar = rpcQuantity(receipt.operatorFeeScalar)
  const constant = rpcQuantity(receipt.operatorFeeConstant)
  if (scalar === undefined || constant === undefined)
    return rpcQuantity(receipt.l1Fee) === undefined ? undefined : 0n
  return receipt.daFootprintGasScalar !== undefined && receipt.daFootprintGasScalar !== null
    ? gasUsed * scalar * 100n + constant
    : (gasUsed * scalar) / 1_000_000n + constant
}
