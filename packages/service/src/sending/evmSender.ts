import { Transaction } from 'micro-eth-signer'
import { findSigner, withAccountKey } from '../domain/wallets.ts'
import { ApiError } from '../kernel/base/errors.ts'
import type { OrganizationRow, SendTransactionRow } from '../kernel/store/model.ts'
import type { ChainSender, SendContext } from './ChainSender.ts'
import { capsOf, checkGasCaps, feeCeilingsOf } from './gasCaps.ts'
import { revertReasonOf } from './revertReason.ts'
import type { SendingOptions } from './SendingOptions.ts'
import { RpcRefusedError } from './sendRpc.ts'

/** A node's refusal that means it already has this transaction. */
const ALREADY_KNOWN = /already known|known transaction|already imported|already in (the )?mempool/i
const NONCE_TOO_LOW = /nonce too low|nonce.*already been used|OldNonce/i
const UNDERPRICED = /underpriced|fee too low|replacement transaction/i

/**
 * EVM chains (`eip155`): broadcasts the signed transaction, follows its receipt (and those of the
 * versions it replaced), and replaces a send stuck past `replaceAfterMs` with the same nonce and
 * higher fees, within the ceilings and a sponsored send's caps.
 */
export const evmSender: ChainSender = {
  namespace: 'eip155',
  tracksWithoutLease: true,
  broadcast,
  track,
  status: (row) => ({ eth: { txHash: row.txHash, ...(row.receipt ? { receipt: row.receipt } : {}) } }),
}

async function broadcast(ctx: SendContext, row: SendTransactionRow): Promise<void> {
  const { rpc, options } = ctx
  try {
    await rpc('eth_sendRawTransaction', [row.signedTransaction])
  } catch (error) {
    if (!(error instanceof RpcRefusedError)) throw error
    if (ALREADY_KNOWN.test(error.message)) {
      // accepted before (a broadcast whose answer was lost): track it
    } else if (NONCE_TOO_LOW.test(error.message)) {
      // Either this very transaction is already mined (broadcast before a crash) or another one
      // took the nonce: the receipt tells.
      if (await settle(ctx, row)) return
      await ctx.fail(row, `the node refused the transaction: ${error.message}`)
      return
    } else if (UNDERPRICED.test(error.message) && row.replacements < options.maxReplacements) {
      await replace(ctx, row)
      return
    } else {
      await ctx.fail(row, `the node refused the transaction: ${error.message}`)
      return
    }
  }
  await ctx.broadcasted(row)
}

async function track(ctx: SendContext, row: SendTransactionRow): Promise<void> {
  const { runtime, options } = ctx
  if (await settle(ctx, row)) return
  const stuck = runtime.now() - (row.broadcastAt ?? 0) > options.replaceAfterMs
  if (stuck && row.replacements < options.maxReplacements) {
    // Re-signing is one instance's job: the lease decides which.
    const claimed = await ctx.claim(row)
    if (claimed) await replace(ctx, claimed)
  }
  // Otherwise nothing changed and nothing is written: the next pass looks again.
}

interface Receipt {
  status: string
  blockNumber: string
  blockHash: string
  gasUsed: string
  effectiveGasPrice?: string
  from: string
  to: string | null
}

/** Records the final status when a version of the send is mined; false while none is. */
async function settle(ctx: SendContext, row: SendTransactionRow): Promise<boolean> {
  for (const hash of [row.txHash, ...(row.priorHashes ?? [])]) {
    const receipt = (await ctx.rpc('eth_getTransactionReceipt', [hash])) as Receipt | null
    if (!receipt) continue
    const summary = {
      blockNumber: BigInt(receipt.blockNumber).toString(),
      blockHash: receipt.blockHash,
      gasUsed: BigInt(receipt.gasUsed).toString(),
      effectiveGasPrice: BigInt(receipt.effectiveGasPrice ?? '0x0').toString(),
      status: receipt.status === '0x1' ? ('success' as const) : ('reverted' as const),
    }
    const status = summary.status === 'success' ? 'INCLUDED' : 'FAILED'
    const error =
      status === 'FAILED'
        ? await revertReasonOf(ctx.rpc, Transaction.fromHex(row.signedTransaction), receipt)
        : undefined
    // What it paid in fees: its native spending limits keep that instead of the most it could
    // have cost (reserved when it was signed); the most where the node does not say.
    const paidFee =
      receipt.effectiveGasPrice === undefined
        ? undefined
        : BigInt(summary.gasUsed) * BigInt(summary.effectiveGasPrice)
    const settled = await ctx.update(
      row,
      {
        status,
        txHash: hash,
        receipt: summary,
        ...(error ? { error } : {}),
        notBefore: Number.MAX_SAFE_INTEGER,
      },
      { whileOpen: true, ...(paidFee === undefined ? {} : { paidFee }) },
    )
    if (settled) ctx.final(row, status)
    return true
  }
  return false
}

/**
 * Counts what a sponsored replacement adds (gas limit × the raise of its max fee) against the wei
 * caps of the user who sent it, as a send is counted; false when a cap refuses it.
 */
async function countReplacement(
  ctx: SendContext,
  row: SendTransactionRow,
  organization: OrganizationRow,
  maxFeePerGas: bigint,
): Promise<boolean> {
  const { runtime } = ctx
  const activity = await runtime.store.get('activities', row.activityId)
  if (!activity || !row.fees) return true
  const gasLimit = BigInt(row.fees.gasLimit)
  const raise = gasLimit * (maxFeePerGas - BigInt(row.fees.maxFeePerGas))
  if (raise <= 0n) return true
  const perTransaction = capsOf(runtime, organization).perTransactionWei
  if (perTransaction !== undefined && gasLimit * maxFeePerGas > BigInt(perTransaction)) return false
  try {
    await runtime.store.transaction((tx) =>
      checkGasCaps(
        {
          tx,
          runtime,
          now: runtime.now(),
          organization,
          newId: () => runtime.newId(),
          caller: { userId: activity.userId },
        },
        // The per-transaction cap was judged above, on the whole replacement.
        { gas: raise, sendTransactionId: row.id, unit: 'wei', perTransaction: false },
      ),
    )
    return true
  } catch (error) {
    if (error instanceof ApiError && error.errorCode === 'GAS_CAP_EXCEEDED') return false
    throw error
  }
}

/** A fee raised by `percent`, rounded up (what a replacement offers over the version before it). */
const bumpFee = (value: bigint, percent: number) => (value * BigInt(100 + percent) + 99n) / 100n

/**
 * The highest `maxFeePerGas` the service may ever sign for an unsponsored send that starts at
 * `maxFeePerGas`: each replacement raises it (`replace`), up to `maxReplacements` times, while it
 * stays at or under the ceiling. A spending limit of the chain's native unit reserves the gas
 * limit times this, so no replacement can cost the signer more than was counted.
 */
export function mostMaxFeePerGas(
  maxFeePerGas: bigint,
  options: Pick<
    Required<SendingOptions>,
    'maxFeePerGasCeiling' | 'maxReplacements' | 'replacementBumpPercent'
  >,
): bigint {
  const ceiling = BigInt(options.maxFeePerGasCeiling)
  let most = maxFeePerGas
  for (let replacement = 0; replacement < options.maxReplacements; replacement++) {
    const next = bumpFee(most, options.replacementBumpPercent)
    if (next > ceiling) break
    most = next
  }
  return most
}

/**
 * Re-signs the send with the same nonce and fees raised by the configured percentage (bounded by
 * the ceiling; a sponsored send's by its organization's sponsored-fee ceiling too), records it and
 * broadcasts it; the earlier versions stay tracked until one is mined.
 */
async function replace(ctx: SendContext, row: SendTransactionRow): Promise<void> {
  const { runtime, options } = ctx
  const previous = Transaction.fromHex(row.signedTransaction)
  const raw = previous.raw as { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint }
  let ceiling = BigInt(options.maxFeePerGasCeiling)
  const organization = row.sponsored
    ? await runtime.store.get('organizations', row.organizationId)
    : undefined
  if (row.sponsored && !organization) {
    // Its sub-organization was deleted: no fee ceiling or cap is left to judge a raise by, and the
    // sponsor would pay for it. It is not replaced; it waits at the price it has.
    await ctx.update(row, {
      notBefore: runtime.now() + options.pollIntervalMs,
      replacements: options.maxReplacements,
    })
    return
  }
  if (organization) {
    const sponsored = feeCeilingsOf(runtime, organization).maxFeePerGas
    if (sponsored < ceiling) ceiling = sponsored
  }
  const bump = (value: bigint) => bumpFee(value, options.replacementBumpPercent)
  const maxFeePerGas = bump(raw.maxFeePerGas ?? 0n)
  if (maxFeePerGas > ceiling) {
    await ctx.update(row, {
      notBefore: runtime.now() + options.pollIntervalMs,
      replacements: options.maxReplacements,
    })
    return
  }
  const maxPriorityFeePerGas = bump(raw.maxPriorityFeePerGas ?? 0n)
  // A sponsored replacement can cost more than was counted at signing: the difference counts
  // against the wei caps first, and a replacement past one is not made (the send waits).
  if (organization && !(await countReplacement(ctx, row, organization, maxFeePerGas))) {
    await ctx.update(row, {
      notBefore: runtime.now() + options.pollIntervalMs,
      replacements: options.maxReplacements,
    })
    return
  }
  const { r: _r, s: _s, yParity: _y, ...unsigned } = previous.raw as Record<string, unknown>
  const prepared = Transaction.prepare({
    ...unsigned,
    type: previous.type,
    maxFeePerGas,
    maxPriorityFeePerGas: maxPriorityFeePerGas > maxFeePerGas ? maxFeePerGas : maxPriorityFeePerGas,
  } as never)
  let signed: string
  if (row.sponsorId) {
    const sponsor = await runtime.store.get('sponsors', row.sponsorId)
    if (!sponsor) return ctx.fail(row, 'the sponsor account is gone')
    const key = runtime.open(sponsor.sealedPrivateKey)
    try {
      signed = prepared.signBy(key).toHex()
    } finally {
      key.fill(0)
    }
  } else {
    const account = await findSigner(runtime.store, row.organizationId, row.sender, 'sender').catch(
      () => undefined,
    )
    if (!account) {
      // Signed elsewhere (eth_send_raw_transaction): only its signer can replace it.
      await ctx.update(row, {
        replacements: options.maxReplacements,
        notBefore: runtime.now() + options.pollIntervalMs,
      })
      return
    }
    signed = withAccountKey(runtime, account, (key) => prepared.signBy(key).toHex())
  }
  const replacement = row.replacements + 1
  const txHash = Transaction.fromHex(signed).hash
  await ctx.update(row, {
    signedTransaction: signed,
    txHash,
    priorHashes: [...(row.priorHashes ?? []), row.txHash],
    replacements: replacement,
    fees: {
      gasLimit: String((previous.raw as { gasLimit?: bigint }).gasLimit ?? 0n),
      maxFeePerGas: maxFeePerGas.toString(),
      maxPriorityFeePerGas: maxPriorityFeePerGas.toString(),
    },
    status: 'PENDING',
    notBefore: 0,
  })
  runtime.emit('send.replaced', { chain: 'eip155', replacement })
}
