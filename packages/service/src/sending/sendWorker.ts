import { Transaction } from 'micro-eth-signer'
import { findSigner, withAccountKey } from '../domain/wallets.ts'
import { ApiError } from '../kernel/base/errors.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { OrganizationRow, SendTransactionRow } from '../kernel/store/model.ts'
import { rpcFor } from './ethSend.ts'
import { capsOf, checkGasCaps, feeCeilingsOf } from './gasCaps.ts'
import { revertReasonOf } from './revertReason.ts'
import { SENDING_DEFAULTS, type SendingOptions } from './SendingOptions.ts'
import { RpcRefusedError, RpcUnreachableError, type SendRpc } from './sendRpc.ts'
import { broadcastSolana, type SendWrites, trackSolana } from './solanaTracking.ts'

/** Sends one pass acts on at once. */
const CONCURRENCY = 16

/** The statuses the worker still acts on. */
const OPEN = ['PENDING', 'BROADCASTED'] as const

/** A node's refusal that means it already has this transaction. */
const ALREADY_KNOWN = /already known|known transaction|already imported|already in (the )?mempool/i
const NONCE_TOO_LOW = /nonce too low|nonce.*already been used|OldNonce/i
const UNDERPRICED = /underpriced|fee too low|replacement transaction/i

export interface SendWorker {
  /** Stops after the pass under way (no send is left half-updated). */
  stop(): Promise<void>
  /** One pass over the open sends now (tests, and the loop). */
  pass(): Promise<void>
}

/**
 * Broadcasts committed sends and tracks them to a final status. Every instance may run one: a send
 * is claimed with a lease (a transaction moving its `notBefore` past the lease), so one instance
 * acts on it at a time; a crash between commit and broadcast leaves it PENDING, and the next pass
 * (after the lease) broadcasts it. Each JSON-RPC call has a timeout and none runs inside a
 * database transaction. An unreachable node leaves the send where it was, retried with backoff.
 */
export function startSendWorker(runtime: Runtime): SendWorker {
  const options = runtime.options.sending ?? SENDING_DEFAULTS
  let stopped = false
  let running: Promise<void> = Promise.resolve()
  let timer: ReturnType<typeof setTimeout> | undefined

  const pass = async () => {
    for (const status of OPEN) {
      let rows: SendTransactionRow[]
      try {
        rows = await runtime.store.findBy('sendTransactions', 'status', status)
      } catch {
        return
      }
      const due = rows.filter((row) => row.notBefore <= runtime.now())
      // Sends are independent (each has its own nonce): several at once, a bounded number.
      let next = 0
      await Promise.all(
        Array.from({ length: Math.min(CONCURRENCY, due.length) }, async () => {
          while (!stopped && next < due.length) {
            const row = due[next++]!
            // Looking for an EVM receipt writes nothing, so it needs no lease: only a broadcast, a
            // replacement or a final status does (they claim or check the row first).
            const claimed =
              row.status === 'BROADCASTED' && chainOf(row) === 'eip155'
                ? row
                : await claim(runtime, row, options.rpcTimeoutMs * 3).catch(() => undefined)
            if (claimed) await step(runtime, claimed).catch(() => undefined)
          }
        }),
      )
      if (stopped) return
    }
  }

  const loop = () => {
    if (stopped) return
    running = pass().finally(() => {
      if (!stopped) timer = unref(setTimeout(loop, options.pollIntervalMs))
    })
  }
  timer = unref(setTimeout(loop, 0))

  return {
    pass: () => {
      running = running.then(pass)
      return running
    },
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await running.catch(() => undefined)
    },
  }
}

/** A timer that does not keep a Node process alive on its own (the service's close stops it). */
function unref(timer: ReturnType<typeof setTimeout>): ReturnType<typeof setTimeout> {
  ;(timer as { unref?: () => void }).unref?.()
  return timer
}

/** Takes `row` for `leaseMs` unless another pass (here or on another instance) took it first. */
async function claim(runtime: Runtime, row: SendTransactionRow, leaseMs: number) {
  return runtime.store.transaction(async (tx) => {
    const current = await tx.get('sendTransactions', row.id)
    if (!current || current.status !== row.status || current.notBefore > runtime.now()) return undefined
    const claimed = { ...current, notBefore: runtime.now() + leaseMs }
    await tx.put('sendTransactions', claimed)
    return claimed
  })
}

/**
 * Writes `changes` to the send (the claim's lease ends with it); with `whileOpen`, only if it is
 * still PENDING or BROADCASTED (another instance may have settled it). Resolves with whether it wrote.
 */
async function update(
  runtime: Runtime,
  row: SendTransactionRow,
  changes: Partial<SendTransactionRow>,
  options: { whileOpen?: boolean } = {},
): Promise<boolean> {
  return runtime.store.transaction(async (tx) => {
    const current = await tx.get('sendTransactions', row.id)
    if (!current) return false
    if (options.whileOpen && !(OPEN as readonly string[]).includes(current.status)) return false
    await tx.put('sendTransactions', { ...current, ...changes, updatedAt: runtime.now() })
    return true
  })
}

/**
 * The chain family of a send by its CAIP-2 namespace; undefined for any other (the activities
 * refuse those at submit, and the worker fails such a row rather than guess how to send it).
 */
export const chainOf = (row: { caip2: string }): 'solana' | 'eip155' | undefined =>
  row.caip2.startsWith('solana:') ? 'solana' : row.caip2.startsWith('eip155:') ? 'eip155' : undefined

const backoff = (runtime: Runtime, attempts: number) =>
  runtime.now() + Math.min(30_000, 250 * 2 ** Math.min(attempts, 7))

async function step(runtime: Runtime, row: SendTransactionRow): Promise<void> {
  const options = runtime.options.sending ?? SENDING_DEFAULTS
  let rpc: SendRpc
  try {
    rpc = rpcFor(runtime, row.caip2)
  } catch {
    await fail(runtime, row, `no JSON-RPC node is configured for ${row.caip2}`)
    return
  }
  const chain = chainOf(row)
  if (!chain) {
    await fail(runtime, row, `${row.caip2.split(':')[0]} is not a chain family the service sends on`)
    return
  }
  try {
    if (chain === 'solana') {
      const writes: SendWrites = {
        update: async (send, changes) => {
          await update(runtime, send, changes)
        },
        fail: (send, message) => fail(runtime, send, message),
        final: (send, status) =>
          runtime.emit('send.final', { chain, status, ms: Math.max(0, runtime.now() - send.createdAt) }),
      }
      if (row.status === 'PENDING') await broadcastSolana(runtime, rpc, row, options, writes)
      else await trackSolana(runtime, rpc, row, options, writes)
    } else if (row.status === 'PENDING') await broadcast(runtime, rpc, row)
    else await track(runtime, rpc, row, options)
  } catch (error) {
    if (!(error instanceof RpcUnreachableError)) throw error
    runtime.emit('send.rpcUnreachable', {
      chain,
      phase: row.status === 'PENDING' ? 'broadcast' : 'track',
    })
    await update(runtime, row, { attempts: row.attempts + 1, notBefore: backoff(runtime, row.attempts + 1) })
  }
}

async function broadcast(runtime: Runtime, rpc: SendRpc, row: SendTransactionRow): Promise<void> {
  const options = runtime.options.sending ?? SENDING_DEFAULTS
  try {
    await rpc('eth_sendRawTransaction', [row.signedTransaction])
  } catch (error) {
    if (!(error instanceof RpcRefusedError)) throw error
    if (ALREADY_KNOWN.test(error.message)) {
      // accepted before (a broadcast whose answer was lost): track it
    } else if (NONCE_TOO_LOW.test(error.message)) {
      // Either this very transaction is already mined (broadcast before a crash) or another one
      // took the nonce: the receipt tells.
      if (await settle(runtime, rpc, row)) return
      await fail(runtime, row, `the node refused the transaction: ${error.message}`)
      return
    } else if (UNDERPRICED.test(error.message) && row.replacements < options.maxReplacements) {
      await replace(runtime, row)
      return
    } else {
      await fail(runtime, row, `the node refused the transaction: ${error.message}`)
      return
    }
  }
  runtime.emit('send.broadcast', { chain: 'eip155', attempt: row.attempts + 1 })
  const now = runtime.now()
  await update(runtime, row, {
    status: 'BROADCASTED',
    attempts: row.attempts + 1,
    broadcastAt: now,
    notBefore: now + options.pollIntervalMs,
  })
}

async function track(
  runtime: Runtime,
  rpc: SendRpc,
  row: SendTransactionRow,
  options: Required<SendingOptions>,
): Promise<void> {
  if (await settle(runtime, rpc, row)) return
  const stuck = runtime.now() - (row.broadcastAt ?? 0) > options.replaceAfterMs
  if (stuck && row.replacements < options.maxReplacements) {
    // Re-signing is one instance's job: the lease decides which.
    const claimed = await claim(runtime, row, options.rpcTimeoutMs * 3)
    if (claimed) await replace(runtime, claimed)
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
async function settle(runtime: Runtime, rpc: SendRpc, row: SendTransactionRow): Promise<boolean> {
  for (const hash of [row.txHash, ...(row.priorHashes ?? [])]) {
    const receipt = (await rpc('eth_getTransactionReceipt', [hash])) as Receipt | null
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
        ? await revertReasonOf(rpc, Transaction.fromHex(row.signedTransaction), receipt)
        : undefined
    const settled = await update(
      runtime,
      row,
      {
        status,
        txHash: hash,
        receipt: summary,
        ...(error ? { error } : {}),
        notBefore: Number.MAX_SAFE_INTEGER,
      },
      { whileOpen: true },
    )
    if (settled)
      runtime.emit('send.final', { chain: 'eip155', status, ms: Math.max(0, runtime.now() - row.createdAt) })
    return true
  }
  return false
}

async function fail(runtime: Runtime, row: SendTransactionRow, message: string): Promise<void> {
  await update(runtime, row, { status: 'FAILED', error: { message }, notBefore: Number.MAX_SAFE_INTEGER })
  runtime.emit('send.final', {
    chain: chainOf(row) ?? 'eip155',
    status: 'FAILED',
    ms: Math.max(0, runtime.now() - row.createdAt),
  })
}

/**
 * Counts what a sponsored replacement adds (gas limit × the raise of its max fee) against the wei
 * caps of the user who sent it, as a send is counted; false when a cap refuses it.
 */
async function countReplacement(
  runtime: Runtime,
  row: SendTransactionRow,
  organization: OrganizationRow,
  maxFeePerGas: bigint,
): Promise<boolean> {
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

/**
 * Re-signs the send with the same nonce and fees raised by the configured percentage (bounded by
 * the ceiling; a sponsored send's by its organization's sponsored-fee ceiling too), records it and
 * broadcasts it; the earlier versions stay tracked until one is mined.
 */
async function replace(runtime: Runtime, row: SendTransactionRow): Promise<void> {
  const options = runtime.options.sending ?? SENDING_DEFAULTS
  const previous = Transaction.fromHex(row.signedTransaction)
  const raw = previous.raw as { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint }
  let ceiling = BigInt(options.maxFeePerGasCeiling)
  const organization = row.sponsored
    ? await runtime.store.get('organizations', row.organizationId)
    : undefined
  if (organization) {
    const sponsored = feeCeilingsOf(runtime, organization).maxFeePerGas
    if (sponsored < ceiling) ceiling = sponsored
  }
  const bump = (value: bigint) => (value * BigInt(100 + options.replacementBumpPercent) + 99n) / 100n
  const maxFeePerGas = bump(raw.maxFeePerGas ?? 0n)
  if (maxFeePerGas > ceiling) {
    await update(runtime, row, {
      notBefore: runtime.now() + options.pollIntervalMs,
      replacements: options.maxReplacements,
    })
    return
  }
  const maxPriorityFeePerGas = bump(raw.maxPriorityFeePerGas ?? 0n)
  // A sponsored replacement can cost more than was counted at signing: the difference counts
  // against the wei caps first, and a replacement past one is not made (the send waits).
  if (organization && !(await countReplacement(runtime, row, organization, maxFeePerGas))) {
    await update(runtime, row, {
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
    if (!sponsor) return fail(runtime, row, 'the sponsor account is gone')
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
      await update(runtime, row, {
        replacements: options.maxReplacements,
        notBefore: runtime.now() + options.pollIntervalMs,
      })
      return
    }
    signed = withAccountKey(runtime, account, (key) => prepared.signBy(key).toHex())
  }
  const replacement = row.replacements + 1
  const txHash = Transaction.fromHex(signed).hash
  await update(runtime, row, {
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
