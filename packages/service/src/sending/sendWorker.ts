import { recordAppEvent } from '../kernel/appEvents.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import { releaseSpend, settleSpend, spendLockOf } from '../kernel/spending.ts'
import type { SendTransactionRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Transaction.ts'
import { namespaceOf, type SendContext } from './ChainSender.ts'
import { settleGasCaps } from './gasCaps.ts'
import { OPEN_STATUSES, type OpenStatus, rpcFor, SENDING, senderOf } from './sendingState.ts'
import { RpcUnreachableError, type SendRpc } from './sendRpc.ts'

/** Sends one pass acts on at once. */
const CONCURRENCY = 16

export interface SendWorker {
  /** Stops after the pass under way (no send is left half-updated). */
  stop(): Promise<void>
  /** One pass over the open sends now (tests, and the loop). */
  pass(): Promise<void>
}

/**
 * Broadcasts committed sends and tracks them to a final status, each through the sender of its
 * chain family (`ChainSender`, by the CAIP-2 namespace). Every instance may run one: a send is
 * claimed with a lease (a transaction moving its `notBefore` past the lease), so one instance
 * acts on it at a time; a crash between commit and broadcast leaves it PENDING, and the next pass
 * (after the lease) broadcasts it. Each JSON-RPC call has a timeout and none runs inside a
 * database transaction. An unreachable node leaves the send where it was, retried with backoff.
 */
export function startSendWorker(
  runtime: Runtime,
  {
    loop: looping = true,
  }: {
    /**
     * Whether it passes on its own every `pollIntervalMs` (the service's worker); false for a worker
     * run by hand, one `pass()` at a time (tests, tooling), which then does nothing between passes.
     */
    loop?: boolean
  } = {},
): SendWorker {
  const { sending: options } = runtime.stateOf(SENDING)
  let stopped = false
  let running: Promise<void> = Promise.resolve()
  let timer: ReturnType<typeof setTimeout> | undefined

  /** Acts on `rows` (those due), `CONCURRENCY` at once, sharing `shared` (the pass's answers). */
  const handle = async (rows: readonly SendTransactionRow[], shared: PassAnswers) => {
    // Sends are independent (each has its own nonce): several at once, a bounded number.
    let next = 0
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, rows.length) }, async () => {
        while (!stopped && next < rows.length) {
          const row = rows[next++]!
          // A look that writes nothing (an EVM receipt) needs no lease: only a broadcast, a
          // replacement or a final status does (they claim or check the row first).
          const claimed =
            row.status === 'BROADCASTED' && senderOf(runtime, row)?.tracksWithoutLease
              ? row
              : await claim(runtime, row).catch(() => undefined)
          if (claimed) await step(runtime, claimed, claimed !== row, shared).catch(() => undefined)
        }
      }),
    )
  }
  /** The open sends of `status` due now; undefined when the database does not answer. */
  const due = async (status: OpenStatus) => {
    try {
      const rows = await runtime.store.findBy('sendTransactions', 'status', status)
      return rows.filter((row) => row.notBefore <= runtime.now())
    } catch {
      return undefined
    }
  }

  // The sends waiting to be broadcast first, then the broadcast ones, tracked `CONCURRENCY` at a
  // time with a look for new sends to broadcast between each batch: a send committed during a
  // pass waits behind one batch of looks at most, not behind every open send of every tenant.
  // The node's answers the pass's sends share (`SendContext.sharedInPass`): one mined count a sender.
  const pass = async () => {
    const shared: PassAnswers = new Map()
    const pending = await due('PENDING')
    if (!pending) return
    await handle(pending, shared)
    if (stopped) return
    const broadcast = await due('BROADCASTED')
    if (!broadcast) return
    for (let i = 0; i < broadcast.length && !stopped; i += CONCURRENCY) {
      if (i > 0) {
        const fresh = await due('PENDING')
        if (fresh && fresh.length > 0) await handle(fresh, shared)
      }
      if (!stopped) await handle(broadcast.slice(i, i + CONCURRENCY), shared)
    }
  }

  // Passes take turns, the loop's and those asked for by hand alike: one never starts while another
  // of this worker runs (a lease then still protects a send from another instance's worker).
  const nextPass = () => {
    running = running.catch(() => undefined).then(pass)
    return running
  }
  const loop = () => {
    if (stopped) return
    nextPass()
      .catch(() => undefined)
      .finally(() => {
        if (!stopped) timer = unref(setTimeout(loop, options.pollIntervalMs))
      })
  }
  if (looping) timer = unref(setTimeout(loop, 0))

  return {
    pass: nextPass,
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await running.catch(() => undefined)
    },
  }
}

/**
 * What one pass's sends share of the node's answers (`SendContext.sharedInPass`), by chain and key:
 * dropped with the pass, so no answer outlives it.
 */
type PassAnswers = Map<string, Promise<unknown>>

/** A timer that does not keep a Node process alive on its own (the service's close stops it). */
function unref(timer: ReturnType<typeof setTimeout>): ReturnType<typeof setTimeout> {
  ;(timer as { unref?: () => void }).unref?.()
  return timer
}

/** Takes `row` for a lease unless another pass (here or on another instance) took it first. */
async function claim(runtime: Runtime, row: SendTransactionRow) {
  const leaseMs = runtime.stateOf(SENDING).sending.rpcTimeoutMs * 3
  return runtime.store.transaction(async (tx) => {
    const current = await tx.get('sendTransactions', row.id)
    if (!current || current.status !== row.status || current.notBefore > runtime.now()) return undefined
    // An earlier claim of its first broadcast ended with nothing recorded: that broadcast may have
    // reached the node (`ChainSender.countsLostClaims`).
    const lost =
      current.status === 'PENDING' &&
      current.attempts === 0 &&
      current.notBefore > 0 &&
      senderOf(runtime, current)?.countsLostClaims === true
    const claimed = { ...current, notBefore: runtime.now() + leaseMs, ...(lost ? { attempts: 1 } : {}) }
    await tx.put('sendTransactions', claimed)
    return claimed
  })
}

/**
 * Writes `changes` to the send (the claim's lease ends with it); with `whileOpen`, only if it is
 * still PENDING or BROADCASTED (another instance may have settled it); with `whileClaimed`, only
 * while nobody has written it since `row` was read. Resolves with whether it wrote.
 */
async function update(
  runtime: Runtime,
  row: SendTransactionRow,
  changes: Partial<SendTransactionRow>,
  options: {
    whileOpen?: boolean
    /** Only while the send's current version (`txHash`) is this one. */
    whileVersion?: string
    /**
     * Only while the send's `notBefore` is still `row`'s. For a row a claim returned (its
     * `notBefore` the lease's end): while the lease is still this one's. An instance stalled past
     * its lease (a slow node answer, a paused process, a slow database) would otherwise write
     * over what the instance that claimed the send after it recorded (a send mined, INCLUDED, made
     * BROADCASTED or FAILED again). A later claim always moves `notBefore` strictly later (it takes
     * the send only once `notBefore` has passed, and sets it to now + the lease, whatever the
     * instances' clocks read), and every other write of the worker moves it too (each sets the
     * next look, a final status the largest number). For a row read without a claim: while
     * nobody has claimed or written it since.
     */
    whileClaimed?: boolean
    /** More writes in the same transaction, given the row as it was. */
    also?: (tx: Transaction, current: SendTransactionRow) => Promise<void> | undefined
    /** Locks taken before the transaction begins (`Store.transaction`'s `locks`). */
    locks?: string[]
  } = {},
): Promise<boolean> {
  return runtime.store.transaction(
    async (tx) => {
      const current = await tx.get('sendTransactions', row.id)
      if (!current) return false
      if (options.whileOpen && !(OPEN_STATUSES as readonly string[]).includes(current.status)) return false
      if (options.whileVersion !== undefined && current.txHash !== options.whileVersion) return false
      if (options.whileClaimed && current.notBefore !== row.notBefore) return false
      await options.also?.(tx, current)
      const changed = changes.status !== undefined && changes.status !== current.status
      // Each status change is counted by the write that makes it (read in this transaction: a
      // rerun counts the same), and its event named by its number: a send BROADCASTED again (a
      // replacement, or back to the version a refused replacement replaced) is a new event, never
      // the id an earlier change had (one id with two bodies, the second overwriting the first's
      // delivery: its number never sent).
      const statusChanges = (current.statusChanges ?? 0) + (changed ? 1 : 0)
      const next = {
        ...current,
        ...changes,
        ...(changed ? { statusChanges } : {}),
        updatedAt: runtime.now(),
      }
      await tx.put('sendTransactions', next)
      // A fill is the operator's (no tenant sent it): no webhook reports it. Nor does a send made
      // PENDING again (a replacement recorded, not yet broadcast): its BROADCASTED, with the new
      // version's hash, follows (docs/webhooks.md: BROADCASTED, INCLUDED, FAILED).
      if (changed && next.status !== 'PENDING' && current.fills === undefined)
        await recordAppEvent(runtime, tx, {
          id: `${row.id}.status.${statusChanges}.${next.status}`,
          organization: { id: current.organizationId },
          type: 'SEND_TRANSACTION_STATUS_UPDATES',
          data: {
            sendTransactionStatusId: row.id,
            caip2: current.caip2,
            status: next.status,
            ...(next.txHash ? { txHash: next.txHash } : {}),
          },
        })
      return true
    },
    options.locks ? { locks: options.locks } : {},
  )
}

const backoff = (runtime: Runtime, attempts: number) =>
  runtime.now() + Math.min(30_000, 250 * 2 ** Math.min(attempts, 7))

/** What `final` reports: the send's chain family, its status and how long it took from commit. */
const reportFinal = (runtime: Runtime, row: SendTransactionRow, status: 'INCLUDED' | 'FAILED') =>
  runtime.emit('send.final', {
    chain: namespaceOf(row.caip2),
    status,
    ms: Math.max(0, runtime.now() - row.createdAt),
  })

/**
 * Ends the send FAILED, only while `row` is still the send as its caller read it (`whileClaimed`):
 * the claim it was read under still holds, so nobody broadcast, replaced or settled it meanwhile.
 * Otherwise nothing is written: the send is the later claimant's, whose look decides it.
 */
async function fail(
  runtime: Runtime,
  row: SendTransactionRow,
  message: string,
  options: {
    more?: (tx: Transaction, current: SendTransactionRow) => Promise<string | undefined>
    keepSpend?: boolean
  } = {},
): Promise<void> {
  // `more` may say more of why it failed (written with the rest, so set before `update` reads it).
  const changes: Partial<SendTransactionRow> = {
    status: 'FAILED',
    error: { message },
    notBefore: Number.MAX_SAFE_INTEGER,
  }
  const failed = await update(runtime, row, changes, {
    whileClaimed: true,
    // Never broadcast: what the send reserved under spending limits is given back with the FAILED,
    // in the order of the organization's other spends (kernel/spending.ts).
    locks: [spendLockOf(row.organizationId)],
    also: async (tx, current) => {
      if (current.status === 'PENDING' && !options.keepSpend && !mayBeOnANode(runtime, current))
        await releaseSpend(
          { tx, runtime, now: runtime.now(), organizationId: current.organizationId },
          current.id,
        )
      changes.error = { message: (await options.more?.(tx, current)) ?? message }
    },
  })
  if (failed) reportFinal(runtime, row, 'FAILED')
}

/**
 * Whether a node may hold the send, as it is now: broadcast, or, for a sender that counts a claim
 * whose answer was lost as an attempt (`ChainSender.countsLostClaims`), attempted. Such a send
 * keeps what it reserved under spending limits when it fails: anything signed that may reach the
 * chain counts.
 */
const mayBeOnANode = (runtime: Runtime, current: SendTransactionRow): boolean =>
  current.broadcastAt !== undefined ||
  (current.attempts > 0 && senderOf(runtime, current)?.countsLostClaims === true)

/**
 * What `update` adds to record a mined send whose fee its native spending limits reserved at its
 * most: they keep `paidFee` instead, in the same transaction, in the order of the organization's
 * other spends (as a release is, `fail`).
 */
function settlingFee(runtime: Runtime, send: SendTransactionRow, paidFee: bigint) {
  return {
    locks: [spendLockOf(send.organizationId)],
    // Once: a send with a receipt recorded was settled with it. One made open again (an instance
    // of an older version writing after its lease ran out) and seen mined again is not settled
    // a second time, which would take what it did not pay off its limits once more.
    also: (tx: Transaction, current: SendTransactionRow) =>
      current.reservedFee === undefined || current.receipt !== undefined
        ? undefined
        : settleSpend(
            { tx, runtime, now: runtime.now(), organizationId: current.organizationId },
            current.id,
            { caip2: current.caip2, by: BigInt(current.reservedFee) - paidFee },
          ),
  }
}

/**
 * Hands `row` to its chain's sender: `leased` when the worker claimed it (the sender claims a send
 * it tracks without a lease itself, `ctx.claim`). Every write of a row under a claim, the worker's
 * or the sender's, holds only while the claim does (`whileClaimed`).
 */
async function step(
  runtime: Runtime,
  row: SendTransactionRow,
  leased: boolean,
  shared: PassAnswers,
): Promise<void> {
  const sender = senderOf(runtime, row)
  if (!sender) {
    // Written by an older version or by hand: failed, never sent as another family's transaction.
    await fail(
      runtime,
      row,
      `${namespaceOf(row.caip2) || row.caip2} is not a chain family the service sends on`,
    )
    return
  }
  let rpc: SendRpc
  try {
    rpc = rpcFor(runtime, row.caip2)
  } catch {
    await fail(runtime, row, `no JSON-RPC node is configured for ${row.caip2}`)
    return
  }
  // The rows of this step under a claim (the worker's, or one the sender took): each is what the
  // claim returned, and written only while the claim holds.
  const claimed = new WeakSet<SendTransactionRow>(leased ? [row] : [])
  const ctx: SendContext = {
    runtime,
    rpc,
    options: runtime.stateOf(SENDING).sending,
    update: (send, changes, { whileOpen, whileVersion, paidFee, also } = {}) => {
      const settling =
        paidFee !== undefined && send.reservedFee !== undefined
          ? settlingFee(runtime, send, paidFee)
          : undefined
      // Mined: a sponsored send's caps keep what it cost, not the most it could have.
      const mined = send.sponsored && changes.receipt ? changes.receipt : undefined
      return update(runtime, send, changes, {
        ...(whileOpen ? { whileOpen } : {}),
        ...(whileVersion === undefined ? {} : { whileVersion }),
        ...(claimed.has(send) ? { whileClaimed: true } : {}),
        ...(settling ? { locks: settling.locks } : {}),
        ...(settling || also || mined
          ? {
              also: async (tx: Transaction, current: SendTransactionRow) => {
                await settling?.also(tx, current)
                if (mined)
                  await settleGasCaps(tx, current.id, {
                    now: runtime.now(),
                    gasUsed: BigInt(mined.gasUsed),
                    paid: paidFee,
                    // What it paid past its L2 gas: its L1 data and operator fees (the
                    // receipt's, else as counted).
                    l1Paid:
                      paidFee === undefined
                        ? 0n
                        : paidFee - BigInt(mined.gasUsed) * BigInt(mined.effectiveGasPrice),
                    l1Counted: BigInt(current.l1Fee ?? '0') + BigInt(current.operatorFee ?? '0'),
                  })
                await also?.(tx, current)
              },
            }
          : {}),
      })
    },
    sharedInPass: <T>(key: string, call: () => Promise<T>) => {
      const at = `${row.caip2} ${key}`
      let answer = shared.get(at) as Promise<T> | undefined
      if (!answer) {
        answer = call()
        shared.set(at, answer)
        // Each send that shares it handles its error; none is left unhandled when none is left.
        answer.catch(() => undefined)
      }
      return answer
    },
    claim: async (send) => {
      const taken = await claim(runtime, send)
      if (taken) claimed.add(taken)
      return taken
    },
    fail: (send, message, also, options) => fail(runtime, send, message, { more: also, ...options }),
    broadcasted: (send) => {
      runtime.emit('send.broadcast', { chain: sender.namespace, attempt: send.attempts + 1 })
      const now = runtime.now()
      // Under the claim it was broadcast under: past it, another instance may have recorded the
      // send since (broadcast, replaced, mined), and its record stands.
      return update(
        runtime,
        send,
        {
          status: 'BROADCASTED',
          attempts: send.attempts + 1,
          broadcastAt: now,
          notBefore: now + runtime.stateOf(SENDING).sending.pollIntervalMs,
        },
        { whileClaimed: true },
      )
    },
    final: (send, status) => reportFinal(runtime, send, status),
  }
  try {
    if (row.status === 'PENDING') await sender.broadcast(ctx, row)
    else await sender.track(ctx, row)
  } catch (error) {
    if (!(error instanceof RpcUnreachableError)) throw error
    runtime.emit('send.rpcUnreachable', {
      chain: sender.namespace,
      phase: row.status === 'PENDING' ? 'broadcast' : 'track',
    })
    // Only while nobody wrote the send since (its claim's, or another instance's that took it).
    await update(
      runtime,
      row,
      { attempts: row.attempts + 1, notBefore: backoff(runtime, row.attempts + 1) },
      { whileClaimed: true },
    )
  }
}
