import { getCompiledTransactionMessageDecoder } from '@solana/transaction-messages'
import { getTransactionDecoder } from '@solana/transactions'
import type { SendTransactionRow } from '../kernel/store/model.ts'
import type { ChainSender, SendContext } from './ChainSender.ts'
import { nodeText, RpcRefusedError, type SendRpc } from './sendRpc.ts'

/** A refusal meaning the node already has this very transaction. */
const ALREADY_PROCESSED = /already been processed|AlreadyProcessed/i
const BLOCKHASH_NOT_FOUND = /blockhash not found|BlockhashNotFound/i

/** While a broadcast send has no status, it is sent again this often (nodes drop what they cannot forward). */
const REBROADCAST_MS = 2_000

/**
 * How long after a send was made a blockhash its node does not know may still be valid on the
 * cluster: a blockhash lasts 150 blocks (60 s at 0.4 s a slot), with room for skipped slots.
 */
export const BLOCKHASH_DOUBT_MS = 100_000

interface SignatureStatus {
  slot: number
  err: unknown
  confirmationStatus?: 'processed' | 'confirmed' | 'finalized' | null
}

const sendRaw = (rpc: SendRpc, row: SendTransactionRow) =>
  rpc('sendTransaction', [
    row.signedTransaction,
    { encoding: 'base64', preflightCommitment: 'confirmed', maxRetries: 0 },
  ])

/**
 * Solana (`solana`): broadcasts the signed transaction, follows its signature status to a
 * confirmation, sends it again while it has none, and fails it once its blockhash expired.
 */
export const solanaSender: ChainSender = {
  namespace: 'solana',
  broadcast: broadcastSolana,
  track: trackSolana,
  status: (row) => ({ solana: { signature: row.txHash, ...(row.slot ? { slot: row.slot } : {}) } }),
}

/** Broadcasts a committed Solana send; a transaction the node already processed is tracked instead. */
async function broadcastSolana(ctx: SendContext, row: SendTransactionRow): Promise<void> {
  const { rpc } = ctx
  try {
    await sendRaw(rpc, row)
  } catch (error) {
    if (!(error instanceof RpcRefusedError)) throw error
    // Processed before a crash, or refused because of itself: its status tells which.
    if (await settleSolana(ctx, row)) return
    if (!ALREADY_PROCESSED.test(error.nodeText)) {
      // Expired, it can never land, and what it reserved is given back. Refused for any other
      // reason, it keeps it: its signer may hold the whole signed transaction (the message it gave
      // and the fee payer's signature, which the status answers as the transaction's signature)
      // and broadcast it once it would pass, while its blockhash lasts.
      // A durable-nonce transaction has no blockhash to expire: refused as expired, its nonce
      // account may hold its nonce later.
      const expired = BLOCKHASH_NOT_FOUND.test(error.nodeText) && !usesDurableNonce(row)
      // A blockhash this node does not know may be one it has not seen yet (newer than its tip,
      // taken from a faster node): valid elsewhere, the signer could broadcast it there after a
      // release. It is sent again until no blockhash of when it was made can still be valid.
      const now = ctx.runtime.now()
      if (expired && now - row.createdAt < BLOCKHASH_DOUBT_MS) {
        await ctx.update(row, { notBefore: now + REBROADCAST_MS }, { whileOpen: true })
        return
      }
      await ctx.fail(
        row,
        expired
          ? 'the transaction expired: its blockhash is no longer valid'
          : `the node refused the transaction: ${error.message}`,
        undefined,
        // One whose blockhash this node never knew may be another cluster's, where it can land.
        { keepSpend: !expired || row.blockhashUnseen === true },
      )
      return
    }
  }
  await ctx.broadcasted(row)
}

const SYSTEM_PROGRAM = '11111111111111111111111111111111'

/**
 * Whether the send's transaction is a durable-nonce one: its first instruction is the System
 * Program's AdvanceNonceAccount (4, little-endian), and its lifetime a nonce, not a blockhash.
 */
function usesDurableNonce(row: SendTransactionRow): boolean {
  const wire = Uint8Array.from(atob(row.signedTransaction), (c) => c.charCodeAt(0))
  const message = getCompiledTransactionMessageDecoder().decode(
    getTransactionDecoder().decode(wire).messageBytes,
  )
  if (!('instructions' in message)) return false
  const first = message.instructions[0]
  const data = first?.data
  return (
    first !== undefined &&
    message.staticAccounts[first.programAddressIndex] === SYSTEM_PROGRAM &&
    data !== undefined &&
    data.length === 4 &&
    data[0] === 4 &&
    data[1] === 0 &&
    data[2] === 0 &&
    data[3] === 0
  )
}

/**
 * Follows a broadcast Solana send: final once confirmed (INCLUDED, or FAILED with the program's
 * error); sent again while it has no status and its blockhash is valid; FAILED once it expired.
 */
async function trackSolana(ctx: SendContext, row: SendTransactionRow): Promise<void> {
  const { runtime, rpc, options } = ctx
  if (await settleSolana(ctx, row)) return
  const now = runtime.now()
  if (now - (row.broadcastAt ?? 0) >= REBROADCAST_MS) {
    const wire = Uint8Array.from(atob(row.signedTransaction), (c) => c.charCodeAt(0))
    const message = getCompiledTransactionMessageDecoder().decode(
      getTransactionDecoder().decode(wire).messageBytes,
    )
    const valid = (await rpc('isBlockhashValid', [message.lifetimeToken, { commitment: 'processed' }])) as {
      value: boolean
    }
    if (!valid.value) {
      // It may have landed between the two reads.
      if (await settleSolana(ctx, row)) return
      await ctx.fail(row, 'the transaction expired: its blockhash is no longer valid')
      return
    }
    await sendRaw(rpc, row).catch((error) => {
      if (!(error instanceof RpcRefusedError)) throw error
    })
    await ctx.update(row, { broadcastAt: now, notBefore: now + options.pollIntervalMs })
    return
  }
  await ctx.update(row, { notBefore: now + options.pollIntervalMs })
}

/** Records the final status once the node has confirmed the transaction; false while it has not. */
async function settleSolana(ctx: SendContext, row: SendTransactionRow): Promise<boolean> {
  const answer = (await ctx.rpc('getSignatureStatuses', [
    [row.txHash],
    { searchTransactionHistory: true },
  ])) as {
    value: (SignatureStatus | null)[]
  }
  const status = answer.value[0]
  if (!status || (status.confirmationStatus !== 'confirmed' && status.confirmationStatus !== 'finalized'))
    return false
  const final = status.err ? 'FAILED' : 'INCLUDED'
  await ctx.update(row, {
    status: final,
    slot: String(status.slot),
    ...(status.err
      ? { error: { message: `the transaction failed: ${nodeText(ctx.rpc, JSON.stringify(status.err))}` } }
      : {}),
    notBefore: Number.MAX_SAFE_INTEGER,
  })
  ctx.final(row, final)
  return true
}
