// The contract between the handlers that sign (activities/: sign_transaction, sign_raw_payload(s);
// sending/: eth_send_transaction, sol_send_transaction, and its worker) and the spending-limits
// wing (limits/, issue 37). A handler describes what its signature spends and calls
// `reserveSpend` inside its own transaction, before it signs; the wing registers the guard that
// counts it. Neither side imports the other.

import type { Curve, TransactionType } from '@latchkey/protocol'
import type { Caller } from './Caller.ts'
import {
  decodeTransactionForPolicy,
  type PolicyTransaction,
  type SolanaPolicyTransaction,
} from './crypto/signTransaction.ts'
import { PluginStateKey, type Runtime } from './Runtime.ts'
import type { ActivityContext } from './registry.ts'
import { anyRows, type Lookup, type Reads } from './store/Reads.ts'
import type { Transaction } from './store/Transaction.ts'

/** One EVM call a signature makes: its target (absent: contract creation), wei and calldata. */
export interface SpendCall {
  to?: string
  value: bigint
  data: string
}

/** What a signature spends, as the handler knows it; the guard decodes the rest (ERC-20 calldata). */
export type SpendDescription =
  | {
      kind: 'evm'
      /** `eip155:<chainId>`; undefined for a legacy transaction without a chain id (valid on every chain). */
      caip2: string | undefined
      calls: SpendCall[]
      /** The transaction carries EIP-7702 authorizations (code for the account: spends it cannot count). */
      delegates?: boolean
      /**
       * The most the signer can pay the network for it, wei: its gas limit times the highest fee
       * per gas it (or a replacement the service would sign) offers. 0 or absent: someone else
       * pays (a sponsor).
       */
      fee?: bigint
      /**
       * The fees beside its gas it can cost on an L2, wei, by CAIP-2 id (the L1 data fee of an OP
       * Stack or Scroll chain, and an OP Stack chain's operator fee): counted with `fee` by the
       * native limits of that chain (`l1FeesOf`). Absent for a chain without them, or one the
       * service has no node for (it cannot tell).
       */
      l1Fees?: Record<string, bigint>
    }
  | {
      kind: 'solana'
      tx: SolanaPolicyTransaction
      /** A sponsor pays its fee, whoever the given transaction names as fee payer. */
      sponsored?: boolean
    }
  /** A payload the service cannot read as a transaction (sign_raw_payload(s)). */
  | { kind: 'opaque'; what: string }

export interface SpendRequest {
  /** The signing account's address, as stored. */
  signer: string
  /**
   * The signing account's key (its `curve` and `publicKey`, as stored). A limit on any address of
   * that key covers the signature, and the transaction is read as the chain sees its signer (the
   * keccak-derived 0x address, the base58 ed25519 key), whatever address format `signer` is in.
   * Without it, `signer` must be that chain address (a Solana address is its key).
   */
  key?: { curve: Curve; publicKey: string }
  /** What it spends: called only when some limit covers the signer (decoding costs nothing otherwise). */
  describe(): SpendDescription
  /**
   * What a release names (`releaseSpend`): a send's id, for a send that may fail before any
   * broadcast. A signature, once made, is never given back: signing activities name none, so
   * their spends keep no reference in the usage row.
   */
  reference?: string
}

/** What the guard runs on: the handler's transaction and its facts. */
export interface SpendContext {
  tx: Transaction
  runtime: Runtime
  now: number
  organizationId: string
  caller: Pick<Caller, 'userId' | 'credential'>
  /** The activity that signs (its refusal is an app event naming it). */
  activity?: {
    id: string
    type: string
    organization: { id: string; parentOrganizationId?: string | undefined }
  }
}

/** Registered by the spending-limits wing as its state. */
export interface SpendGuard {
  /** Refuses (a 4xx naming the limit) or counts the spend, in `ctx.tx`. */
  reserve(ctx: SpendContext, request: SpendRequest): Promise<void>
  /** Gives back what `reference` reserved (a send that failed before any broadcast), in `ctx.tx`. */
  release(ctx: Omit<SpendContext, 'caller'>, reference: string): Promise<void>
  /**
   * Lowers what `reference` reserved under the native limits of `caip2` by `by` (a mined send's
   * fee reserved at its most, of which it paid less), in `ctx.tx`.
   */
  settle(
    ctx: Omit<SpendContext, 'caller'>,
    reference: string,
    fee: { caip2: string; by: bigint },
  ): Promise<void>
}

export const SPEND_GUARD = new PluginStateKey<SpendGuard>('spendGuard')

/**
 * The lock that orders every writer of an organization's limit state (its limits and their usage
 * rows), in every process of the database: the spends under its limits, the releases, and the
 * activities that create, change or delete a limit. The pipeline takes it before their
 * transaction begins (`ServicePlugin.serializes`), so each reads what the last holder committed;
 * `orderSpends` takes it in the transaction where the pipeline did not (the send worker).
 */
export const spendLockOf = (organizationId: string): string => `spend:${organizationId}`

/** Holds the organization's spend lock (`spendLockOf`) in `tx` until it ends: a no-op when held. */
export const orderSpends = (tx: Transaction, organizationId: string): Promise<void> =>
  tx.lock(spendLockOf(organizationId))

/** What the guard runs on in an activity: its transaction and caller. */
export const spendContextOf = (ctx: ActivityContext): SpendContext => ({
  tx: ctx.tx,
  runtime: ctx.runtime,
  now: ctx.now,
  organizationId: ctx.organization.id,
  caller: ctx.caller,
  activity: { id: ctx.activityId, type: ctx.type ?? '', organization: ctx.organization },
})

// A service assembled without the limits wing has none: nothing to count.
const guardOf = (runtime: Runtime): SpendGuard | undefined => runtime.loadedState(SPEND_GUARD)

/** Reserves what a signature spends under every limit covering it, or throws the refusal. */
export async function reserveSpend(ctx: SpendContext, request: SpendRequest): Promise<void> {
  await guardOf(ctx.runtime)?.reserve(ctx, request)
}

/**
 * Keeps, under the native limits of `fee.caip2`, what a mined send paid in fees instead of what
 * was reserved for it: `fee.by` less, the most it could have cost past what it did, or more when
 * `fee.by` is negative (an L1 data fee past the one reserved); nothing when nothing was reserved.
 */
export async function settleSpend(
  ctx: Omit<SpendContext, 'caller'>,
  reference: string,
  fee: { caip2: string; by: bigint },
): Promise<void> {
  if (fee.by !== 0n) await guardOf(ctx.runtime)?.settle(ctx, reference, fee)
}

/** Releases what `reference` reserved (nothing when nothing was). */
export async function releaseSpend(ctx: Omit<SpendContext, 'caller'>, reference: string): Promise<void> {
  await guardOf(ctx.runtime)?.release(ctx, reference)
}

/**
 * What a signing handler reads ahead (its `lookups`) so that, with no limit in its organization,
 * its snapshot run answers "none" without a transaction.
 */
export const spendLookups = (organizationId: string): Lookup[] => [
  { table: 'spendingLimits', field: 'organizationId', value: organizationId },
]

/**
 * Whether the organization has spending limits (read from what `spendLookups` read ahead): a
 * signing worked out ahead of its transaction then also works out what it spends.
 */
export async function hasSpendingLimits(reads: Reads, organizationId: string): Promise<boolean> {
  return anyRows(reads, 'spendingLimits', 'organizationId', organizationId)
}

/** What an unsigned transaction of `sign_transaction` spends, decoded from its bytes. */
export function describeTransaction(type: TransactionType, unsignedTransaction: string): SpendDescription {
  let decoded: PolicyTransaction
  try {
    decoded = decodeTransactionForPolicy(type, unsignedTransaction)
  } catch {
    return { kind: 'opaque', what: 'an unsigned transaction that does not decode' }
  }
  return describeDecoded(decoded)
}

/**
 * What a transaction decoded as a policy reads it spends (`describeTransaction` without the
 * decoding: a crypto job that signed it answered it, `SignTransactionJob.describe`).
 */
export function describeDecoded(decoded: PolicyTransaction): SpendDescription {
  if ('solana' in decoded) return { kind: 'solana', tx: decoded.solana.tx }
  const { tx } = decoded.eth
  return {
    kind: 'evm',
    caip2: tx.chain_id === '0' ? undefined : `eip155:${tx.chain_id}`,
    calls: [{ ...(tx.to ? { to: tx.to } : {}), value: BigInt(tx.value), data: tx.data }],
    delegates: tx.authorization_list.length > 0,
    fee: BigInt(tx.gas) * BigInt(tx.max_fee_per_gas ?? tx.gas_price ?? '0'),
  }
}

/** `spend` with the L1 data fees `l1FeesOf` priced for it (an EVM spend's; any other as it is). */
export function withL1Fees(
  spend: SpendDescription,
  l1Fees: Record<string, bigint> | undefined,
): SpendDescription {
  return spend.kind === 'evm' && l1Fees ? { ...spend, l1Fees } : spend
}

/**
 * The fees an L2 charges the sender of a transaction beside its L2 gas, which no field of the
 * transaction caps: the L1 data fee of an OP Stack chain (OP Mainnet, Base) or of Scroll, and an
 * OP Stack chain's operator fee (since Isthmus). Provided by the sending wing, which has the
 * chains' nodes (`provideL1Fees`), so that `sign_transaction` counts them under native limits.
 */
export interface L1FeePricer {
  /** Whether it can price `caip2`'s fees: the service has a node for that chain. */
  prices(caip2: string): boolean
  /**
   * The fees beside gas to count for a transaction of `unsignedSize` bytes with `gasLimit` on
   * `caip2`, wei (0 on a chain without them); an `ApiError` (503) when the node does not answer.
   * Outside any transaction.
   */
  feeOf(caip2: string, unsignedSize: number, gasLimit: bigint): Promise<bigint>
}

const l1FeePricers = new WeakMap<Runtime, L1FeePricer>()

/** Registers `runtime`'s L1 fee pricer (the sending wing, as it loads). */
export function provideL1Fees(runtime: Runtime, pricer: L1FeePricer): void {
  l1FeePricers.set(runtime, pricer)
}

/**
 * The EVM chains whose native limits in the organization would count an L1 data fee the service
 * can price (it has a node for them): none, so nothing to price, in almost every organization.
 */
export async function pricedChains(
  runtime: Runtime,
  reads: Reads,
  organizationId: string,
): Promise<Set<string>> {
  const pricer = l1FeePricers.get(runtime)
  if (!pricer) return new Set()
  return new Set(
    (await reads.findBy('spendingLimits', 'organizationId', organizationId))
      .map(({ asset }) => (asset.type === 'SPENDING_LIMIT_ASSET_NATIVE' ? asset.caip2 : ''))
      .filter((caip2) => caip2.startsWith('eip155:') && pricer.prices(caip2)),
  )
}

/**
 * The L1 data and operator fees `sign_transaction`'s Ethereum `unsignedTransaction` can cost (its
 * operator fee at its gas limit), by chain, for the
 * native limits of the organization that would count them: those of its chain (for one without a
 * chain id, valid on every chain, each chain a native limit names) that the service has a node
 * for. Before the activity's transaction (its `prepare`): it asks the chain's node. Undefined
 * when no such limit exists (nothing decoded, nothing asked); a transaction that does not decode
 * is left to the guard, which refuses it.
 */
export async function l1FeesOf(
  runtime: Runtime,
  reads: Reads,
  organizationId: string,
  unsignedTransaction: string,
): Promise<Record<string, bigint> | undefined> {
  const pricer = l1FeePricers.get(runtime)
  const chains = await pricedChains(runtime, reads, organizationId)
  if (!pricer || chains.size === 0) return undefined
  let chainId: string
  let gasLimit: bigint
  try {
    const decoded = decodeTransactionForPolicy('TRANSACTION_TYPE_ETHEREUM', unsignedTransaction)
    if (!('eth' in decoded)) return undefined
    chainId = decoded.eth.tx.chain_id
    gasLimit = BigInt(decoded.eth.tx.gas)
  } catch {
    return undefined
  }
  const size = (unsignedTransaction.length - (/^0x/i.test(unsignedTransaction) ? 2 : 0)) / 2
  const fees: Record<string, bigint> = {}
  for (const caip2 of chainId === '0' ? chains : [`eip155:${chainId}`])
    if (chains.has(caip2)) fees[caip2] = await pricer.feeOf(caip2, size, gasLimit)
  return fees
}
