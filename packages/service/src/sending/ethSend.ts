import type { EthCall, EthSendTransactionParameters } from '@latchkey/protocol'
import { bytesToHex } from '@noble/hashes/utils.js'
import { authorization, Transaction } from 'micro-eth-signer'
import { topLevelOf } from '../domain/organizations.ts'
import { findSigner, withAccountKey } from '../domain/wallets.ts'
import { ConflictError, FieldError, LimitError, NotConfiguredError } from '../kernel/base/errors.ts'
import { signDigest } from '../kernel/crypto/secp256k1Sign.ts'
import type { Reader } from '../kernel/Reader.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { ActivityContext, PolicyFactFields, PolicyFacts, PrepareContext } from '../kernel/registry.ts'
import { reserveSpend, spendContextOf } from '../kernel/spending.ts'
import type { SendTransactionRow } from '../kernel/store/model.ts'
import type { Reads, Transaction as StoreTransaction } from '../kernel/store/Store.ts'
import {
  batchExecutionDigest,
  encodeExecuteBatch,
  encodeSelfExecuteBatch,
  readDelegateNonce,
  readDelegation,
} from './delegate/index.ts'
import { mostMaxFeePerGas, mostStartingTip, sponsoredMostMaxFeePerGas } from './evmSender.ts'
import { capRowIdOf, checkGasCaps, feeCeilingsOf } from './gasCaps.ts'
import { L1_FEE_HEADROOM, l1DataFeeBound, operatorFeeBound, unsignedSizeBound } from './l1DataFee.ts'
import { revertChainOf } from './revertReason.ts'
import {
  checkNonceGap,
  delegateCounterOf,
  forgetNonceHole,
  MAX_OPEN_SENDS,
  type NewSend,
  nonceFloor,
  nonceIdOf,
  onChain,
  openHoles,
  pendingSend,
  rpcFor,
  SENDING,
  submittedWithOf,
} from './sendingState.ts'
import { nodeFailure, RpcRefusedError, RpcUnreachableError, type SendRpc } from './sendRpc.ts'
import { findSponsor } from './sponsors.ts'

/** Most calls of one `eth_send_transaction`. */
export const MAX_CALLS = 50

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const DECIMAL = /^\d{1,78}$/
const HEX_DATA = /^0x(?:[0-9a-fA-F]{2})*$/
const EIP155 = /^eip155:[1-9]\d{0,15}$/
const UINT256_MAX = (1n << 256n) - 1n
const GWEI = 10n ** 9n

/**
 * What the signer encodes (micro-eth-signer's strict ranges): a value outside is refused at once,
 * naming the field, instead of failing the signing.
 */
const SIGNER_RANGES = {
  nonce: [0n, 131_072n, 'at most 131072'],
  gasLimit: [21_000n, 30_000_000n, 'between 21000 and 30000000'],
  maxFeePerGas: [1n, 10_000n * GWEI, 'between 1 wei and 10000 gwei'],
  maxPriorityFeePerGas: [0n, 10_000n * GWEI, 'at most 10000 gwei'],
} as const satisfies Record<string, readonly [bigint, bigint, string]>

/** Refuses `value` of `name` outside what the signer encodes (400 naming the field). */
export function checkSignerRange(name: keyof typeof SIGNER_RANGES, value: bigint, source = ''): void {
  const [min, max, hint] = SIGNER_RANGES[name]
  if (value < min || value > max)
    throw new FieldError({
      field: `parameters.${name}`,
      message: `parameters.${name}${source} is ${value}; it must be ${hint}`,
    })
}

/** A decimal integer string (wei, gas, nonces, seconds), checked to fit 256 bits. */
function decimal(r: Reader, name: string): string | undefined {
  if (!r.has(name)) return undefined
  const value = r.value[name]
  const field = r.field(name)
  if (typeof value !== 'string' || !DECIMAL.test(value) || BigInt(value) > UINT256_MAX)
    throw new FieldError({ field, reason: 'must be a decimal integer string' })
  return BigInt(value).toString()
}

function call(r: Reader): EthCall {
  const to = r.string('to', { max: 42, pattern: ADDRESS, hint: 'a 0x-prefixed 20-byte hex address' })
  return {
    to,
    value: decimal(r, 'value') ?? '0',
    data:
      r.optString('data', {
        min: 0,
        max: 256 * 1024,
        pattern: HEX_DATA,
        hint: '0x-prefixed hex of whole bytes',
      }) ?? '0x',
  }
}

/**
 * Most bytes a sponsored send's calls may carry, as the batch encodes them (each call's data rounded
 * up to 32-byte words, and 192 bytes of its own): geth refuses a transaction over 128 KiB
 * (`txMaxSize`), and the rest of the transaction (the batch's header and signature, the
 * authorization, the envelope) fits in the 2 KiB left. A bigger one would be signed at the
 * sponsor's next nonce and refused by the node.
 */
export const MAX_SPONSORED_CALL_BYTES = 126 * 1024

/** Refuses a sponsored send whose calls' data would make a transaction the node refuses (400 naming the call's data). */
function checkSponsoredCalldata(r: Reader, calls: readonly EthCall[]): void {
  let bytes = 0
  calls.forEach((c, index) => {
    bytes += 192 + Math.ceil((c.data!.length - 2) / 2 / 32) * 32
    if (bytes > MAX_SPONSORED_CALL_BYTES)
      throw new FieldError({
        field: r.has('calls') ? `${r.field('calls')}[${index}].data` : r.field('data'),
        reason: `takes the sponsored send's calls past ${MAX_SPONSORED_CALL_BYTES} bytes of call data (each call's data in 32-byte words, and 192 bytes more): a node refuses a transaction over 128 KiB`,
      })
  })
}

/**
 * `eth_send_transaction`'s parameters, V2 (`calls`) or V1 (one inline call), as V2: every value a
 * decimal string, every call with its `value` and `data`.
 */
export function parseEthSend(r: Reader): EthSendTransactionParameters {
  const calls = r.has('calls')
    ? r.array('calls', (value, field) => call(new (r.constructor as typeof Reader)(value, field)), {
        min: 1,
        max: MAX_CALLS,
      })
    : [call(r)]
  const optional = (name: keyof EthSendTransactionParameters) => {
    const value = decimal(r, name)
    if (value !== undefined && name in SIGNER_RANGES)
      checkSignerRange(name as keyof typeof SIGNER_RANGES, BigInt(value))
    return value === undefined ? {} : { [name]: value }
  }
  const sponsor = r.optBool('sponsor') ?? false
  // The sponsor's nonce and the account's batch nonce are the service's to assign on a sponsored
  // send: a caller's would park the sponsor's transactions behind a gap, or take another user's.
  if (sponsor)
    for (const name of ['nonce', 'gasStationNonce'] as const)
      if (r.has(name))
        throw new FieldError({
          field: `parameters.${name}`,
          reason: 'must not be given on a sponsored send: the service assigns it',
        })
  if (sponsor) checkSponsoredCalldata(r, calls)
  const maxFeePerGas = decimal(r, 'maxFeePerGas')
  const maxPriorityFeePerGas = decimal(r, 'maxPriorityFeePerGas')
  if (
    maxFeePerGas !== undefined &&
    maxPriorityFeePerGas !== undefined &&
    BigInt(maxPriorityFeePerGas) > BigInt(maxFeePerGas)
  )
    throw new FieldError({
      field: 'parameters.maxPriorityFeePerGas',
      reason: `${maxPriorityFeePerGas} is above parameters.maxFeePerGas ${maxFeePerGas}`,
    })
  return {
    from: r.string('from', { max: 42, pattern: ADDRESS, hint: 'a 0x-prefixed 20-byte hex address' }),
    caip2: r.string('caip2', { max: 24, pattern: EIP155, hint: 'an EVM CAIP-2 chain id like eip155:1' }),
    sponsor,
    calls,
    ...optional('nonce'),
    ...optional('gasLimit'),
    ...optional('maxFeePerGas'),
    ...optional('maxPriorityFeePerGas'),
    ...optional('deadline'),
    ...optional('gasStationNonce'),
  }
}

/** What `prepareEthSend` read from the node, outside any transaction. */
export interface EthSendPrepared {
  chainId: string
  /** The account that signs and pays for the outer transaction. */
  sender: string
  /** `eth_getTransactionCount(sender, pending)`: the floor of the nonce assigned. */
  senderNonce: string
  /** The user's pending nonce, for the authorization when the sponsor is the sender. */
  accountNonce?: string
  gasLimit: string
  maxFeePerGas: string
  maxPriorityFeePerGas: string
  /** Batches: the delegate contract, whether `from` already delegates to it, its batch nonce. */
  batch?: { delegate: string; delegated: boolean; delegateNonce: string; deadline: string }
  sponsorId?: string
  /**
   * The L1 data fee counted for it, wei (OP Stack and Scroll chains, `l1DataFee.ts`): the
   * oracle's bound for its size at signing, times `L1_FEE_HEADROOM`; absent on a chain without one.
   */
  l1Fee?: string
  /**
   * The operator fee counted for it, wei (OP Stack chains since Isthmus, `operatorFeeBound`): the
   * oracle's `getOperatorFee` of its gas limit at signing; absent where it is 0.
   */
  operatorFee?: string
}

/** The fields `ethSendPolicyFacts` gives each call's `eth.tx` (`ActivityHandler.policyFactFields`). */
export const ETH_SEND_POLICY_FACT_FIELDS: PolicyFactFields = {
  ethTx: ['gas', 'max_fee_per_gas', 'max_priority_fee_per_gas'],
}

/**
 * What policies read of a prepared send (`ActivityHandler.policyFacts`), in each call's `eth.tx`:
 * the gas limit it is signed with, and the most fee per gas and tip the account may pay for it,
 * its replacements' included (`mostMaxFeePerGas`, as its spending limits reserve), whether the
 * caller set them or the node's estimate and fees did. A sponsored send costs the account no fee:
 * both are 0 (what the sponsor pays is bounded by the operator's gas caps, not by policies).
 */
export function ethSendPolicyFacts(runtime: Runtime, prepared: unknown): PolicyFacts {
  const send = prepared as EthSendPrepared
  if (send.sponsorId !== undefined)
    return { ethTx: { gas: send.gasLimit, max_fee_per_gas: '0', max_priority_fee_per_gas: '0' } }
  const { sending } = runtime.stateOf(SENDING)
  const most = mostMaxFeePerGas(BigInt(send.maxFeePerGas), sending)
  // A replacement raises the tip as it raises the fee, never past it.
  const mostTip = mostMaxFeePerGas(BigInt(send.maxPriorityFeePerGas), {
    ...sending,
    maxFeePerGasCeiling: most.toString(),
  })
  return {
    ethTx: {
      gas: send.gasLimit,
      max_fee_per_gas: most.toString(),
      max_priority_fee_per_gas: (mostTip < most ? mostTip : most).toString(),
    },
  }
}

/** Gas a batch may use: a bound that covers the delegate's checks and ordinary calls (unused gas is not paid). */
function batchGasLimit(calls: readonly EthCall[], authorized: boolean): bigint {
  const dataBytes = calls.reduce((sum, c) => sum + BigInt((c.data!.length - 2) / 2), 0n)
  return 80_000n + (authorized ? 0n : 30_000n) + 70_000n * BigInt(calls.length) + 40n * dataBytes
}

/** How far ahead a sponsored batch's `deadline` must be, seconds. */
export const SPONSORED_DEADLINE_MARGIN_SECONDS = 300n

/**
 * Checks what needs the clock or the configuration and reads from the node what signing needs:
 * chain id, pending nonces, fees, gas, and for batches the delegation and delegate nonce.
 */
export async function prepareEthSend(
  ctx: PrepareContext,
  p: EthSendTransactionParameters,
): Promise<EthSendPrepared> {
  const nowSeconds = BigInt(Math.floor(ctx.now / 1000))
  if (p.deadline !== undefined && BigInt(p.deadline) <= nowSeconds)
    throw new FieldError({ field: 'parameters.deadline', reason: `${p.deadline} is in the past` })
  // A batch mined after its deadline reverts, and the simulation before signing (the account's
  // call to itself) does not see it: a sponsored one whose deadline may pass first would make the
  // sponsor pay for a failure its caller chose.
  if (
    p.sponsor &&
    p.deadline !== undefined &&
    BigInt(p.deadline) < nowSeconds + SPONSORED_DEADLINE_MARGIN_SECONDS
  )
    throw new FieldError({
      field: 'parameters.deadline',
      reason: `a sponsored batch's deadline must be at least ${SPONSORED_DEADLINE_MARGIN_SECONDS} seconds away (it is ${BigInt(p.deadline) - nowSeconds}), so that it cannot pass before the batch is mined`,
    })
  // Only the organization's own account is read from the node: anything else would fail `run`
  // anyway, after the caller had made the service call it.
  await senderAccount(ctx.reads, ctx.organization.id, p.from)
  const rpc = rpcFor(ctx.runtime, p.caip2)
  const batch = p.sponsor || p.calls.length > 1
  const { sponsorship } = ctx.runtime.stateOf(SENDING)
  const delegate = batch ? sponsorship?.delegates[p.caip2] : undefined
  if (batch && !delegate)
    throw new NotConfiguredError({
      code: 'SPONSORSHIP_NOT_CONFIGURED',
      field: p.sponsor ? 'parameters.sponsor' : 'parameters.calls',
      message: `no delegate contract is configured for ${p.caip2}: ${p.sponsor ? 'sponsored sends' : 'batches of several calls'} are not available`,
    })
  const sponsor = p.sponsor ? findSponsor(ctx.runtime, ctx.organization) : undefined
  if (p.sponsor && !sponsor)
    throw new NotConfiguredError({
      code: 'SPONSORSHIP_NOT_CONFIGURED',
      field: 'parameters.sponsor',
      message: `no sponsor account serves organization ${ctx.organization.id}`,
    })
  const sender = sponsor?.address ?? p.from
  try {
    const chainId = BigInt((await rpc('eth_chainId', [])) as string)
    if (`eip155:${chainId}` !== p.caip2)
      throw new FieldError({
        field: 'parameters.caip2',
        message: `the node configured for ${p.caip2} serves eip155:${chainId}`,
      })
    const [senderNonce, accountNonce, block, tip] = await Promise.all([
      rpc('eth_getTransactionCount', [sender, 'pending']) as Promise<string>,
      sponsor ? (rpc('eth_getTransactionCount', [p.from, 'pending']) as Promise<string>) : undefined,
      rpc('eth_getBlockByNumber', ['latest', false]) as Promise<{ baseFeePerGas?: string }>,
      // A sponsored send's tip is held to the node's suggestion too (`feesOf`).
      p.maxPriorityFeePerGas === undefined || p.sponsor
        ? (rpc('eth_maxPriorityFeePerGas', []) as Promise<string>)
        : undefined,
    ])
    const { maxFeePerGas, maxPriorityFeePerGas } = feesOf(ctx, p, {
      baseFee: BigInt(block.baseFeePerGas ?? '0x0'),
      tip: tip === undefined ? undefined : BigInt(tip as string),
    })
    let batchFacts: EthSendPrepared['batch']
    let gasLimit: bigint
    if (batch && delegate) {
      const delegation = await readDelegation(rpc, p.from).catch((error: Error) => {
        if (error instanceof RpcRefusedError || error instanceof RpcUnreachableError) throw error
        throw new FieldError({
          field: 'parameters.from',
          message: `${p.from} cannot send a batch: ${error.message}`,
        })
      })
      const delegated = delegation === delegate.toLowerCase()
      const delegateNonce =
        p.gasStationNonce ?? (delegated ? (await readDelegateNonce(rpc, p.from)).toString() : '0')
      batchFacts = {
        delegate,
        delegated,
        delegateNonce,
        deadline: p.deadline ?? (nowSeconds + 3600n).toString(),
      }
      gasLimit = BigInt(p.gasLimit ?? batchGasLimit(p.calls, delegated))
      if (sponsor) {
        // The least gas limit the signed transaction needs, from the calls' simulation: a
        // caller's under it would pass the simulation and run out of gas on chain, at the
        // sponsor's cost; without one, the default is raised to it.
        const least = await simulateBatch(rpc, p, batchFacts)
        if (p.gasLimit !== undefined && gasLimit < least)
          throw new FieldError({
            field: 'parameters.gasLimit',
            message: `parameters.gasLimit is ${gasLimit}; this sponsored batch needs at least ${least} (its calls as simulated, the delegate's signature and nonce checks${delegated ? '' : ', the authorization'} and the transaction's data)`,
            extra: { minimum: least.toString() },
          })
        if (gasLimit < least) gasLimit = least
        checkSignerRange('gasLimit', gasLimit, ' (what this sponsored batch needs)')
      }
    } else {
      const [only] = p.calls
      gasLimit = BigInt(
        p.gasLimit ??
          (BigInt(
            (await rpc('eth_estimateGas', [
              {
                from: p.from,
                to: only!.to,
                value: `0x${BigInt(only!.value!).toString(16)}`,
                data: only!.data,
              },
            ])) as string,
          ) *
            6n) /
            5n,
      )
    }
    // What the signed transaction's data is at most: the call's, or the batch's with the largest
    // nonce and a signature of non-zero bytes (as `simulateBatch` bounds it).
    const data = batchFacts
      ? batchDataBound(spendCallsOf(p), batchFacts.deadline)
      : (p.calls[0]!.data ?? '0x')
    const l1Fee =
      L1_FEE_HEADROOM *
      (await l1DataFeeBound(
        ctx.runtime,
        rpc,
        p.caip2,
        unsignedSizeBound((data.length - 2) / 2, batchFacts && !batchFacts.delegated ? 1 : 0),
      ))
    // And the operator fee an OP Stack chain charges on the gas it uses, at most its gas limit.
    const operatorFee = await operatorFeeBound(ctx.runtime, rpc, p.caip2, gasLimit)
    return {
      ...(l1Fee > 0n ? { l1Fee: l1Fee.toString() } : {}),
      ...(operatorFee > 0n ? { operatorFee: operatorFee.toString() } : {}),
      chainId: chainId.toString(),
      sender,
      senderNonce: BigInt(senderNonce).toString(),
      ...(accountNonce !== undefined ? { accountNonce: BigInt(accountNonce).toString() } : {}),
      gasLimit: gasLimit.toString(),
      maxFeePerGas: maxFeePerGas.toString(),
      maxPriorityFeePerGas: maxPriorityFeePerGas.toString(),
      ...(batchFacts ? { batch: batchFacts } : {}),
      ...(sponsor ? { sponsorId: sponsor.id } : {}),
    }
  } catch (error) {
    throw nodeFailure(error, p.caip2, 'parameters.calls')
  }
}

/**
 * The fees a send signs, wei. Unsponsored: the caller's, else the node's tip and twice the base
 * fee plus the tip. Sponsored, the operator's ceilings bound both (`feeCeilingsOf`): a caller's
 * fee above one is refused naming the field; the node's suggestion is lowered to it; a base fee
 * already above the ceiling refuses the send (`GAS_CAP_EXCEEDED`: it could not be included). The
 * tip is bounded lower, so that its replacements' raised tips stay under its ceiling
 * (`mostStartingTip`): a caller's above that is refused naming it (`maximum`), the node's lowered.
 * A sponsored send is also held to the market: a caller's `maxFeePerGas` under the latest block's
 * base fee, or tip under the node's suggestion (lowered to the ceiling), is refused naming the
 * field. It takes the sponsor's next nonce, shared by every user: one the node refuses or never
 * mines would hold back every sponsored send after it.
 * Either way a fee the signer cannot encode is refused naming the field.
 */
function feesOf(
  ctx: PrepareContext,
  p: EthSendTransactionParameters,
  node: { baseFee: bigint; tip?: bigint },
): { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } {
  const min = (a: bigint, b: bigint) => (a < b ? a : b)
  let tip = BigInt(p.maxPriorityFeePerGas ?? node.tip ?? 0n)
  let maxFee = p.maxFeePerGas !== undefined ? BigInt(p.maxFeePerGas) : undefined
  if (p.sponsor) {
    const ceiling = feeCeilingsOf(ctx.runtime, ctx.organization)
    const over = (name: 'maxFeePerGas' | 'maxPriorityFeePerGas', value: bigint) =>
      new FieldError({
        field: `parameters.${name}`,
        reason: `${value} is above the operator's ceiling for sponsored sends (${ceiling[name]} wei)`,
        extra: { ceiling: ceiling[name].toString() },
      })
    if (maxFee !== undefined && maxFee > ceiling.maxFeePerGas) throw over('maxFeePerGas', maxFee)
    // The tip it may start at: its replacements raise it, and stay under the ceiling.
    const sending = ctx.runtime.stateOf(SENDING).sending
    const tipCeiling = mostStartingTip(ceiling.maxPriorityFeePerGas, sending)
    if (p.maxPriorityFeePerGas !== undefined && tip > tipCeiling)
      throw new FieldError({
        field: 'parameters.maxPriorityFeePerGas',
        reason: `${tip} is above ${tipCeiling} wei, the highest tip a sponsored send may start at: each of its up to ${sending.maxReplacements} replacements raises it ${sending.replacementBumpPercent}%, and the operator's ceiling for sponsored sends is ${ceiling.maxPriorityFeePerGas} wei`,
        extra: { maximum: tipCeiling.toString(), ceiling: ceiling.maxPriorityFeePerGas.toString() },
      })
    if (node.baseFee > ceiling.maxFeePerGas) {
      ctx.runtime.emit('send.capExceeded', { cap: 'max fee per gas' })
      throw new LimitError({
        code: 'GAS_CAP_EXCEEDED',
        field: 'parameters.sponsor',
        message: `the network's base fee ${node.baseFee} is above the operator's ceiling for sponsored sends (${ceiling.maxFeePerGas} wei): try again when it falls`,
        extra: { cap: 'max fee per gas' },
      })
    }
    const under = (
      name: 'maxFeePerGas' | 'maxPriorityFeePerGas',
      value: bigint,
      floor: bigint,
      what: string,
    ) =>
      new FieldError({
        field: `parameters.${name}`,
        reason: `${value} is below ${what} (${floor} wei): a sponsored send takes the sponsor's next nonce, so it must be priced to be mined; leave it out to take the node's price`,
        extra: { floor: floor.toString() },
      })
    // Half the node's suggestion: the suggestion moves from block to block (geth's is a percentile
    // of recent tips), so a wallet's quote read a moment before is not refused for a few wei; a
    // tip that low is still mined, and a replacement raises it.
    const tipFloor = min((node.tip ?? 0n) / 2n, tipCeiling)
    // The tip a block pays is at most the max fee over the base fee: a max fee that leaves less
    // than the floor is as low a tip as one named (with the tip left out, the tip became the max fee).
    if (maxFee !== undefined && maxFee < node.baseFee + tipFloor)
      throw under(
        'maxFeePerGas',
        maxFee,
        node.baseFee + tipFloor,
        "the network's base fee plus half the node's suggested priority fee",
      )
    if (p.maxPriorityFeePerGas !== undefined && tip < tipFloor)
      throw under('maxPriorityFeePerGas', tip, tipFloor, "half the node's suggested priority fee")
    tip = min(tip, tipCeiling)
    maxFee ??= min(2n * node.baseFee + tip, ceiling.maxFeePerGas)
  }
  maxFee ??= 2n * node.baseFee + tip
  tip = min(tip, maxFee)
  const suggested = p.maxFeePerGas === undefined ? ' (as the node suggests)' : ''
  checkSignerRange('maxFeePerGas', maxFee, suggested)
  checkSignerRange(
    'maxPriorityFeePerGas',
    tip,
    p.maxPriorityFeePerGas === undefined ? ' (as the node suggests)' : '',
  )
  return { maxFeePerGas: maxFee, maxPriorityFeePerGas: tip }
}

/** EIP-7623's tokens of `data` (hex): 1 a zero byte, 4 any other; what both gas rules below count. */
function calldataTokens(data: string): bigint {
  let tokens = 0n
  for (let i = 2; i < data.length; i += 2) tokens += data.slice(i, i + 2) === '00' ? 1n : 4n
  return tokens
}

/** Intrinsic gas of a transaction with `data` (hex) and `authorizations` (EIP-2028: 4 a token; EIP-7702). */
export function intrinsicGas(data: string, authorizations = 0): bigint {
  return 21_000n + 25_000n * BigInt(authorizations) + 4n * calldataTokens(data)
}

/**
 * Refuses a gas limit under the intrinsic gas of the transaction about to be signed, or under
 * EIP-7623's floor for its data (400 naming the field): the signer would refuse the first as
 * "intrinsic gas too low", and a node (Prague on) the second, after it was signed and its nonce
 * taken.
 */
function checkIntrinsicGas(gasLimit: bigint, data: string, authorizations = 0): void {
  const intrinsic = intrinsicGas(data, authorizations)
  const floor = calldataFloorGas(data)
  const least = intrinsic > floor ? intrinsic : floor
  if (gasLimit < least)
    throw new FieldError({
      field: 'parameters.gasLimit',
      message:
        intrinsic >= floor
          ? `parameters.gasLimit is ${gasLimit}; this transaction needs at least ${least} (its intrinsic gas: 21000, its data${authorizations > 0 ? ' and its authorization' : ''})`
          : `parameters.gasLimit is ${gasLimit}; this transaction needs at least ${least}: EIP-7623's floor for its data (21000 and 10 a token: 1 a zero byte, 4 any other), which it pays whatever it runs`,
      extra: { minimum: least.toString() },
    })
}

/** A send's calls with their defaults filled in (no value: 0; no data: `0x`). */
const spendCallsOf = (p: EthSendTransactionParameters) =>
  p.calls.map((c) => ({ to: c.to, value: BigInt(c.value ?? '0'), data: c.data ?? '0x' }))

/**
 * The data of the signed batch, bounded from above: the largest batch nonce and a signature of
 * non-zero bytes (its size and calldata cost are at least the real one's).
 */
const batchDataBound = (calls: ReturnType<typeof spendCallsOf>, deadline: string) =>
  encodeExecuteBatch({
    calls,
    nonce: UINT256_MAX,
    deadline: BigInt(deadline),
    signature: `0x${'ff'.repeat(65)}`,
  })

/** EIP-7623's floor: a transaction with `data` uses at least this much gas, whatever it runs. */
function calldataFloorGas(data: string): bigint {
  return 21_000n + 10n * calldataTokens(data)
}

/**
 * Gas the delegate's `execute` with a signed batch spends beyond the account's call to itself:
 * the EIP-712 digest (a hash of each call's data), the signature's recovery, the batch nonce's
 * write (a first one, from zero, costs 17,100 more) and the event. Measured on anvil
 * (LatchkeyDelegate, optimizer 200 runs): 16,075 for one call, 21,787 for five, 33,200 for one
 * with the nonce still zero; this bound is 1,000 to 2,000 above each.
 */
function executeBatchOverhead(calls: readonly EthCall[], delegateNonce: string): bigint {
  const dataBytes = calls.reduce((sum, c) => sum + BigInt(((c.data ?? '0x').length - 2) / 2), 0n)
  return 16_000n + 1_500n * BigInt(calls.length) + dataBytes + (delegateNonce === '0' ? 17_100n : 0n)
}

/**
 * Runs the calls a sponsored batch makes, as they will run, before anything is signed, and
 * answers the least gas limit the signed transaction needs. `eth_estimateGas` of the account
 * calling itself through the delegate (the delegation put in place by a state override of its
 * code with the EIP-7702 designator when it does not delegate yet): the delegate runs the same
 * calls from the same account as the signed batch would; only its own checks (batch nonce,
 * deadline, signature) are left out, and the service sets those itself. The signed transaction
 * needs that, plus what those checks spend (`executeBatchOverhead`), plus the difference of its
 * intrinsic gas (longer data, 25,000 per authorization), and at least EIP-7623's floor of its
 * data (a node takes a transaction under it and never mines it, which would stall every later
 * send of the sponsor). Its data is bounded from above: a batch nonce and a signature of
 * non-zero bytes only. A revert is refused with its decoded revert chain (`TRANSACTION_REVERTED`,
 * from `eth_call` of the same call) and the sponsor pays nothing.
 */
async function simulateBatch(
  rpc: SendRpc,
  p: EthSendTransactionParameters,
  batch: { delegate: string; delegated: boolean; delegateNonce: string; deadline: string },
): Promise<bigint> {
  const calls = spendCallsOf(p)
  const call = { from: p.from, to: p.from, data: encodeSelfExecuteBatch(calls) }
  const override = batch.delegated
    ? undefined
    : { [p.from]: { code: `0xef0100${batch.delegate.slice(2).toLowerCase()}` } }
  const at = (method: string) =>
    rpc(method, override ? [call, 'latest', override] : [call, 'latest']) as Promise<string>
  let estimate: bigint
  try {
    estimate = BigInt(await at('eth_estimateGas'))
  } catch (error) {
    if (!(error instanceof RpcRefusedError)) throw error
    // The revert as eth_call reports it (every node gives its data there); a node whose
    // estimate failed for another reason answers this call, and its refusal stands.
    try {
      await at('eth_call')
    } catch (reverted) {
      if (!(reverted instanceof RpcRefusedError)) throw reverted
      const revertChain = revertChainOf(reverted.data)
      const shown = revertChain[0]!.displayMessage
      throw new ConflictError({
        code: 'TRANSACTION_REVERTED',
        field: 'parameters.calls',
        message: `the sponsored batch would revert${shown === 'execution reverted' ? '' : ` with ${shown}`}; nothing was signed`,
        extra: { revertChain, error: { message: shown, revertChain, eth: { revertChain } } },
      })
    }
    throw error
  }
  const signedData = batchDataBound(calls, batch.deadline)
  const least =
    estimate -
    intrinsicGas(call.data) +
    intrinsicGas(signedData, batch.delegated ? 0 : 1) +
    executeBatchOverhead(p.calls, batch.delegateNonce)
  const floor = calldataFloorGas(signedData)
  return least > floor ? least : floor
}

/**
 * Takes the next outer nonce of `address` on `caip2` in the activity's transaction: the larger of
 * the stored next nonce and the node's pending count. Concurrent sends from one account (on any
 * instance) write the same row, so the database serialises them (SERIALIZABLE on PostgreSQL,
 * one writer on SQLite): no nonce is given twice and none is skipped.
 * With `holes`, the lowest of the counter's holes (`NonceRow.holes`: nonces it gave that no
 * transaction will use, recorded by the worker) at or above `floor` is taken first, and the
 * counter stays where it is. When the stored one is ahead of `floor` and `restart` answers true, it
 * is set aside, with its holes, and the count starts again from `floor` (the node knows best when
 * nothing of this account is in flight); `restart` is asked only then. A counter ahead of the node
 * is otherwise trusted over it: a node behind a load balancer may answer a count a block old. The
 * counter never goes back by itself otherwise: a send the
 * node refused gives its nonce back when it was the last taken (`giveBackNonce`), and a nonce that
 * a later one was taken after is filled by the worker (`evmSender`): a sponsor's by the sponsor, a
 * user's account's by the account, its fee counted under the account's native spending limits.
 */
export async function takeNonce(
  tx: StoreTransaction,
  nonce: {
    now: number
    caip2: string
    address: string
    floor: string
    restart?: () => Promise<boolean>
    holes?: boolean
  },
): Promise<bigint> {
  const { now, caip2, address } = nonce
  const id = nonceIdOf(caip2, address)
  const row = await tx.get('nonces', id)
  const stored = row ? BigInt(row.next) : 0n
  const floor = nonceFloor(row, BigInt(nonce.floor))
  const holes = openHoles(row, floor)
  const write = (next: bigint, left: bigint[]) =>
    tx.put('nonces', {
      id,
      next: next.toString(),
      ...(left.length > 0 ? { holes: left.map(String) } : {}),
      ...(row?.least === undefined ? {} : { least: row.least }),
      createdAt: row?.createdAt ?? now,
      updatedAt: now,
    })
  const [lowest, ...rest] = holes
  if (nonce.holes && lowest !== undefined) {
    await write(stored, rest)
    return lowest
  }
  const restarted = stored > floor && (await nonce.restart?.()) === true
  const next = stored > floor && !restarted ? stored : floor
  await write(next + 1n, restarted ? [] : holes)
  return next
}

/** The organization's Ethereum account (or private key) `from` names, else a 404 or 400 naming `parameters.from`. */
async function senderAccount(reads: Reads, organizationId: string, from: string) {
  const account = await findSigner(reads, organizationId, from, 'parameters.from')
  if (account.curve !== 'CURVE_SECP256K1')
    throw new FieldError({ field: 'parameters.from', message: `${from} is not an Ethereum account` })
  return account
}

/**
 * In the activity's transaction: checks the sponsor's caps, assigns nonces, signs (the user's key:
 * the transaction, or the authorization and the batch; the sponsor's: the outer transaction) and
 * records the send with its broadcast job, committed with the activity.
 */
export async function runEthSend(
  ctx: ActivityContext,
  p: EthSendTransactionParameters,
): Promise<{ sendTransactionStatusId: string }> {
  const prepared = ctx.prepared as EthSendPrepared
  const account = await senderAccount(ctx.tx, ctx.organization.id, p.from)
  const sponsor = prepared.sponsorId ? await ctx.tx.get('sponsors', prepared.sponsorId) : undefined
  if (prepared.sponsorId && !sponsor)
    throw new NotConfiguredError({
      code: 'SPONSORSHIP_NOT_CONFIGURED',
      field: 'parameters.sponsor',
      message: 'the sponsor account is gone',
    })
  const id = ctx.newId()
  // On an OP Stack or Scroll chain, the L1 data fee its sender pays too, and on an OP Stack chain
  // since Isthmus the operator fee (`l1DataFee.ts`).
  const l1Fee = BigInt(prepared.l1Fee ?? '0')
  const operatorFee = BigInt(prepared.operatorFee ?? '0')
  // The most the sponsor can pay for it: every unit of gas at the highest fee it or a replacement
  // of it may be signed at, its L1 data fee and its operator fee. Its replacements are paid for
  // here: a cap that refused one later would leave it unmined at the sponsor's nonce, every
  // user's sends behind it.
  const prepaidMaxFeePerGas = sponsor
    ? sponsoredMostMaxFeePerGas(ctx.runtime, ctx.organization, BigInt(prepared.maxFeePerGas))
    : undefined
  if (prepaidMaxFeePerGas !== undefined) {
    // Each in a row of its own id: what it cost is given back from it once mined (`settleGasCaps`).
    await checkGasCaps(ctx, {
      gas: BigInt(prepared.gasLimit),
      sendTransactionId: id,
      id: capRowIdOf(id, 'gas'),
    })
    await checkGasCaps(ctx, {
      gas: BigInt(prepared.gasLimit) * prepaidMaxFeePerGas + l1Fee + operatorFee,
      sendTransactionId: id,
      id: capRowIdOf(id, 'wei'),
      unit: 'wei',
      detail: ` (its gas limit ${prepared.gasLimit} at ${prepaidMaxFeePerGas} wei a gas, the most its replacements may offer${l1Fee > 0n ? `, and its L1 data fee ${l1Fee}` : ''}${operatorFee > 0n ? `, and its operator fee ${operatorFee}` : ''})`,
    })
  }
  const chainId = BigInt(prepared.chainId)
  const calls = spendCallsOf(p)
  // Every call of the send counts under the spending limits covering the account, reserved here,
  // and so does the most an unsponsored send can cost its signer in fees, replacements included
  // (what it paid, once mined: `settleSpend`).
  const reservedFee = sponsor
    ? 0n
    : BigInt(prepared.gasLimit) *
        mostMaxFeePerGas(BigInt(prepared.maxFeePerGas), ctx.runtime.stateOf(SENDING).sending) +
      l1Fee +
      operatorFee
  await reserveSpend(spendContextOf(ctx), {
    signer: account.address,
    key: { curve: account.curve, publicKey: account.publicKey },
    describe: () => ({ kind: 'evm', caip2: p.caip2, calls, fee: reservedFee }),
    reference: id,
  })
  const fees = {
    chainId,
    gasLimit: BigInt(prepared.gasLimit),
    maxFeePerGas: BigInt(prepared.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(prepared.maxPriorityFeePerGas),
  }
  // An unsponsored send's nonce is the account's own: the lowest hole its counter has, if any (a
  // nonce a refused sponsored send's authorization took, which no fill takes), else the account's
  // later sends would wait behind it for good. Not for a batch whose authorization is to take the
  // nonce after it, which may not name a hole. One the caller names is no hole any more.
  const holes = !sponsor && (!prepared.batch || prepared.batch.delegated)
  // A nonce the caller names (never on a sponsored send: `parseEthSend`) is held to the gap a raw
  // transaction's is: far past the account's next, the node would only queue it, unmined.
  const counter = p.nonce === undefined ? undefined : await ctx.tx.get('nonces', nonceIdOf(p.caip2, p.from))
  if (p.nonce !== undefined)
    checkNonceGap({
      counter,
      pending: BigInt(prepared.senderNonce),
      nonce: BigInt(p.nonce),
      caip2: p.caip2,
      address: p.from,
      field: 'parameters.nonce',
    })
  if (p.nonce !== undefined && !holes) {
    // A batch that delegates the account at a hole: its authorization takes the nonce after the
    // hole, one the counter gave already (or gives next). Its nonce is not counted (never filled,
    // never given back): had it taken the hole, a refusal would leave that nonce neither filled
    // nor a hole, the account's later sends behind it for good.
    if (counter?.holes?.includes(BigInt(p.nonce).toString()))
      throw new FieldError({
        field: 'parameters.nonce',
        reason: `${p.nonce} is a nonce the service's counter of ${p.from} gave and no transaction uses (its next send takes it); a batch that delegates the account takes the nonce after it as well, which the counter gave too: send it without a nonce`,
      })
  }
  const namedHole =
    p.nonce !== undefined &&
    holes &&
    (await forgetNonceHole(ctx.tx, { now: ctx.now, caip2: p.caip2, address: p.from, nonce: BigInt(p.nonce) }))
  // Whether the counter gave the nonce (`countedNonce`): taken here, or a hole of it the caller
  // named as the counter would have given it (not a batch whose authorization takes the nonce
  // after it, which the counter never gave). Only such a nonce goes back to the counter, or is
  // filled, should the node refuse the send: one the caller named otherwise never went through
  // the counter (a nonce past the account's next, or one of an account that holds nothing), and a
  // fill of it would be tracked for the caller for free (`evmSender`'s `failUnmined`).
  const countedNonce = p.nonce === undefined || namedHole
  const nonce =
    p.nonce !== undefined
      ? BigInt(p.nonce)
      : await takeNonce(ctx.tx, {
          now: ctx.now,
          caip2: p.caip2,
          address: prepared.sender,
          floor: prepared.senderNonce,
          holes,
        })
  let signed: string
  if (!prepared.batch) {
    const [only] = calls
    checkIntrinsicGas(fees.gasLimit, only!.data)
    signed = withAccountKey(ctx.runtime, account, (key) =>
      Transaction.prepare({
        type: 'eip1559',
        to: only!.to,
        value: only!.value,
        data: only!.data,
        nonce,
        ...fees,
      })
        .signBy(key)
        .toHex(),
    )
  } else {
    const batch = prepared.batch
    // The delegate's batch nonce, like the outer one, is assigned here: a second batch signed before
    // the first is included must not reuse the nonce the node still reports (it would revert).
    // With no batch of this account still in flight, the node's count is the truth (a batch that
    // reverted did not spend its nonce), so the counter starts again from it.
    let busy: boolean | undefined
    const inFlight = async () =>
      (busy ??= (await ctx.tx.findBy('sendTransactions', 'openAccount', onChain(p.caip2, p.from))).length > 0)
    const delegateCounter = {
      now: ctx.now,
      caip2: delegateCounterOf(p.caip2),
      address: p.from,
      floor: batch.delegateNonce,
    }
    const delegateNonce =
      p.gasStationNonce !== undefined
        ? BigInt(batch.delegateNonce)
        : await takeNonce(ctx.tx, { ...delegateCounter, restart: async () => !(await inFlight()) })
    const userCounter = { now: ctx.now, caip2: p.caip2, address: p.from }
    // The authorization spends one of the user's nonces: after the outer transaction's own when the
    // user sends it, else the user's next. A sponsored one, with nothing of the account in flight,
    // takes the node's count: a nonce an earlier authorization took and the node never used (a
    // refused send, which no fill takes) would otherwise make this one invalid when mined.
    const authorizationNonce = batch.delegated
      ? undefined
      : sponsor
        ? await takeNonce(ctx.tx, {
            ...userCounter,
            floor: prepared.accountNonce ?? '0',
            restart: async () => !(await inFlight()),
            holes: true,
          })
        : p.nonce !== undefined
          ? nonce + 1n
          : // The counter's next, one past the outer nonce it just gave; the floor is the node's
            // count, below which alone holes are passed (the one past the outer nonce would drop
            // every hole of the account's counter, all below it).
            await takeNonce(ctx.tx, { ...userCounter, floor: prepared.senderNonce })
    const { signature, authorizationList } = withAccountKey(ctx.runtime, account, (key) => {
      const digest = batchExecutionDigest({
        chainId,
        account: p.from,
        calls,
        nonce: delegateNonce,
        deadline: BigInt(batch.deadline),
      })
      const recovered = signDigest(digest, key)
      // 'recovered' layout: recovery byte ‖ r ‖ s; the contract takes r ‖ s ‖ v with v 27 or 28.
      const signature = `0x${bytesToHex(recovered.slice(1, 65))}${(27 + recovered[0]!).toString(16)}`
      const authorizationList =
        authorizationNonce === undefined
          ? []
          : [authorization.sign({ chainId, address: batch.delegate, nonce: authorizationNonce }, key)]
      return { signature, authorizationList }
    })
    const data = encodeExecuteBatch({
      calls,
      nonce: delegateNonce,
      deadline: BigInt(batch.deadline),
      signature,
    })
    const outer = { to: p.from, value: 0n, data, nonce, ...fees }
    checkIntrinsicGas(fees.gasLimit, data, authorizationList.length)
    const sign = (key: Uint8Array) =>
      (authorizationList.length > 0
        ? Transaction.prepare({ type: 'eip7702', ...outer, authorizationList })
        : Transaction.prepare({ type: 'eip1559', ...outer })
      )
        .signBy(key)
        .toHex()
    if (sponsor) {
      const key = ctx.runtime.open(sponsor.sealedPrivateKey)
      try {
        signed = sign(key)
      } finally {
        key.fill(0)
      }
    } else signed = withAccountKey(ctx.runtime, account, sign)
  }
  await recordSend(ctx, {
    id,
    organizationId: ctx.organization.id,
    activityId: ctx.activityId,
    caip2: p.caip2,
    sender: prepared.sender,
    account: p.from,
    sponsored: Boolean(sponsor),
    ...(sponsor ? { sponsorId: sponsor.id } : {}),
    nonce: nonce.toString(),
    ...(countedNonce ? { countedNonce: true as const } : {}),
    // The credential its spending limits counted it under: a fill of its nonce counts under them too.
    submittedWith: submittedWithOf(ctx.caller),
    signedTransaction: signed,
    txHash: Transaction.fromHex(signed).hash,
    fees: {
      gasLimit: prepared.gasLimit,
      maxFeePerGas: prepared.maxFeePerGas,
      maxPriorityFeePerGas: prepared.maxPriorityFeePerGas,
    },
    ...(sponsor ? {} : { reservedFee: reservedFee.toString() }),
    ...(prepaidMaxFeePerGas !== undefined
      ? {
          prepaidMaxFeePerGas: prepaidMaxFeePerGas.toString(),
          capsOrganizationId: topLevelOf(ctx.organization),
        }
      : {}),
    ...(l1Fee > 0n ? { l1Fee: l1Fee.toString() } : {}),
    ...(operatorFee > 0n ? { operatorFee: operatorFee.toString() } : {}),
  })
  ctx.runtime.emit('send.signed', { chain: 'eip155', sponsored: Boolean(sponsor), calls: p.calls.length })
  return { sendTransactionStatusId: id }
}

/** The most open sends one organization holds (`sendingState`'s, where the worker counts its fills too). */
export { MAX_OPEN_SENDS }

/**
 * In the activity's transaction: records a signed send as PENDING (its broadcast job, which the
 * worker takes after commit) and answers it; with `dedupe`, a send already open with the same
 * transaction on the same chain (the same signed bytes given again) is answered instead and nothing
 * is written (the node is asked about it once, not once per submission). Refuses (412
 * `RESOURCE_LIMIT_REACHED` naming `organizationId` and the cap) a send of an organization holding
 * `MAX_OPEN_SENDS` open. Both are counted in the transaction (SERIALIZABLE on PostgreSQL: two
 * submissions at once, on one instance or two, never both pass; SQLite runs one at a time), each
 * through its index: the organization's open sends, and the open send of the same transaction.
 */
export async function recordSend(
  ctx: Pick<ActivityContext, 'tx' | 'now' | 'organization'>,
  send: NewSend,
  options: { dedupe?: boolean } = {},
): Promise<SendTransactionRow> {
  const { tx, now } = ctx
  const max = ctx.organization.parentOrganizationId
    ? MAX_OPEN_SENDS.subOrganization
    : MAX_OPEN_SENDS.organization
  if (options.dedupe) {
    // The organization's own: another's send of the same transaction is none of its business.
    const same = (await tx.findBy('sendTransactions', 'openHash', onChain(send.caip2, send.txHash))).find(
      (row) => row.organizationId === send.organizationId,
    )
    if (same) return same
  }
  const openHere = await tx.count('sendTransactions', 'openIn', send.organizationId)
  if (openHere >= max)
    throw new LimitError({
      code: 'RESOURCE_LIMIT_REACHED',
      field: 'organizationId',
      message: `organization ${send.organizationId} has ${openHere} sends not yet final (broadcast or waiting to be mined); at most ${max} (openSendsPerOrganization): send again once some are mined or failed`,
      extra: { limit: 'openSendsPerOrganization', max },
    })
  const row = pendingSend(now, send)
  await tx.put('sendTransactions', row)
  return row
}
