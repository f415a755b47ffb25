import { getCompiledTransactionMessageDecoder } from '@solana/transaction-messages'
import { getTransactionDecoder } from '@solana/transactions'
import type { Runtime } from '../kernel/Runtime.ts'
import type { SendTransactionRow } from '../kernel/store/model.ts'
import type { SendingOptions } from './SendingOptions.ts'
import { RpcRefusedError, type SendRpc } from './sendRpc.ts'

/** A refusal meaning the node already has this very transaction. */
const ALREADY_PROCESSED = /already been processed|AlreadyProcessed/i
const BLOCKHASH_NOT_FOUND = /blockhash not found|BlockhashNotFound/i

/** While a broadcast send has no status, it is sent again this often (nodes drop what they cannot forward). */
const REBROADCAST_MS = 2_000

/** How the worker writes a send; the worker passes its own. */
export interface SendWrites {
  update(row: SendTransactionRow, changes: Partial<SendTransactionRow>): Promise<void>
  fail(row: SendTransactionRow, message: string): Promise<void>
  final(row: SendTransactionRow, status: 'INCLUDED' | 'FAILED'): void
}

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

/** Broadcasts a committed Solana send; a transaction the node already processed is tracked instead. */
export async function broadcastSolana(
  runtime: Runtime,
  rpc: SendRpc,
  row: SendTransactionRow,
  options: Required<SendingOptions>,
  writes: SendWrites,
): Promise<void> {
  try {
    await sendRaw(rpc, row)
  } catch (error) {
    if (!(error instanceof RpcRefusedError)) throw error
    // Processed before a crash, or refused because of itself: its status tells which.
    if (await settleSolana(rpc, row, writes)) return
    if (!ALREADY_PROCESSED.test(error.message)) {
      await writes.fail(
        row,
        BLOCKHASH_NOT_FOUND.test(error.message)
          ? 'the transaction expired: its blockhash is no longer valid'
          : `the node refused the transaction: ${error.message}`,
      )
      return
    }
  }
  runtime.emit('send.broadcast', { chain: 'solana', attempt: row.attempts + 1 })
  const now = runtime.now()
  await writes.update(row, {
    status: 'BROADCASTED',
    attempts: row.attempts + 1,
    broadcastAt: now,
    notBefore: now + options.pollIntervalMs,
  })
}

/**
 * Follows a broadcast Solana send: final once confirmed (INCLUDED, or FAILED with the program's
 * error); sent again while it has no status and its blockhash is valid; FAILED once it expired.
 */
export async function trackSolana(
  runtime: Runtime,
  rpc: SendRpc,
  row: SendTransactionRow,
  options: Required<SendingOptions>,
  writes: SendWrites,
): Promise<void> {
  if (await settleSolana(rpc, row, writes)) return
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
      if (await settleSolana(rpc, row, writes)) return
      await writes.fail(row, 'the transaction expired: its blockhash is no longer valid')
      return
    }
    await sendRaw(rpc, row).catch((error) => {
      if (!(error instanceof RpcRefusedError)) throw error
    })
    await writes.update(row, { broadcastAt: now, notBefore: now + options.pollIntervalMs })
    return
  }
  await writes.update(row, { notBefore: now + options.pollIntervalMs })
}

/** Records the final status once the node has confirmed the transaction; false while it has not. */
async function settleSolana(rpc: SendRpc, row: SendTransactionRow, writes: SendWrites): Promise<boolean> {
  const answer = (await rpc('getSignatureStatuses', [[row.txHash], { searchTransactionHistory: true }])) as {
    value: (SignatureStatus | null)[]
  }
  const status = answer.value[0]
  if (!status || (status.confirmationStatus !== 'confirmed' && status.confirmationStatus !== 'finalized'))
    return false
  const final = status.err ? 'FAILED' : 'INCLUDED'
  await writes.update(row, {
    status: final,
    slot: String(status.slot),
    ...(status.err ? { error: { message: `the transaction failed: ${JSON.stringify(status.err)}` } } : {}),
    notBefore: Number.MAX_SAFE_INTEGER,
  })
  writes.final(row, final)
  return true
}
