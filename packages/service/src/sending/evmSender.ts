import { Transaction } from 'micro-eth-signer'
import { submitterOf } from '../domain/submitters.ts'
import { findSigner, withAccountKey } from '../domain/wallets.ts'
import { ApiError } from '../kernel/base/errors.ts'
import { reserveSpend } from '../kernel/spending.ts'
import type { SendTransactionRow, SponsorRow, WalletAccountRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Reads.ts'
import type { Transaction as StoreTransaction } from '../kernel/store/Store.ts'
import type { ChainSender, SendContext } from './ChainSender.ts'
import { BATCH_EXECUTED_TOPIC, EXECUTE_SELECTOR_HEX } from './delegate/index.ts'
import { type CapContext, type CapsOrganization, capsOf, checkGasCaps, feeCeilingsOf } from './gasCaps.ts'
import { operatorFeePaid } from './l1DataFee.ts'
import { revertReasonOf } from './revertReason.ts'
import type { SendingOptions } from './SendingOptions.ts'
import {
  delegateCounterOf,
  giveBackNonce,
  MAX_HOLES,
  MAX_OPEN_SENDS,
  OPEN_STATUSES,
  pendingSend,
  raiseNonceFloor,
  recordNonceHole,
  SENDING,
} from './sendingState.ts'
import { RpcRefusedError, rpcQuantity } from './sendRpc.ts'

/** A node's refusal that means it already has this transaction. */
const ALREADY_KNOWN = /already known|known transaction|already imported|already in (the )?mempool/i
const NONCE_TOO_LOW = /nonce too low|nonce.*already been used|OldNonce/i
const UNDERPRICED = /underpriced|fee too low|replacement transaction/i
/**
 * A node's refusal of a version that carries the user's authorization which the user can keep up
 * for as long as it likes, at no cost, in the words of the nodes that have it: geth and erigon
 * while the user's account keeps a transaction of its own pending ("authority already reserved"),
 * or as many as a delegated account may ("in-flight transaction limit"), or while its address is
 * reserved by another pool ("address already reserved"); Nethermind's "delegation authority has
 * pending transaction" (`DelegatorHasPendingTx` in older releases). Whatever the words, a refusal
 * while the account keeps a transaction of its own pending is taken as one (`heldByTheUser`).
 * Such a replacement is made again without the authorization (`withoutAuthorization`). Any other
 * refusal (funds, a fee cap, the price, a pool that is full, a provider's rate limit) may pass:
 * the replacement is tried again as it is (`replacementRefused`), so a passing refusal never costs
 * an honest user the batch.
 */
const HELD_BY_THE_USER =
  /authority already reserved|address already reserved|in-flight transaction limit|delegation authority has pending|DelegatorHasPendingTx/i

/** A refusal the sponsor (or the operator) passes: its balance, a node's fee cap, the price. */
const SPONSOR_MAY_PASS =
  /insufficient funds|fee cap|exceeds the configured cap|underpriced|fee too low|replacement transaction|base fee/i

/**
 * Whether the node's refusal of a version carrying `row`'s authorization (`nodeText`: the node's
 * own words, not the redacted message) is one its user keeps up (`HELD_BY_THE_USER`): its words,
 * or, in words neither those nor the sponsor's (`SPONSOR_MAY_PASS`), the account keeps a
 * transaction of its own pending (its pending count past its mined one), which is what every
 * node's rule of this kind is about. Two node calls, only for a refusal in words of neither kind;
 * a node that does not answer them leaves the replacement to be tried again as it is.
 */
async function heldByTheUser(ctx: SendContext, row: SendTransactionRow, nodeText: string): Promise<boolean> {
  if (HELD_BY_THE_USER.test(nodeText)) return true
  if (SPONSOR_MAY_PASS.test(nodeText)) return false
  try {
    // Its mined count afresh, not the pass's (a stale one would read a pending transaction).
    const [pending, mined] = await Promise.all([
      pendingCount(ctx, row.account),
      freshMinedCount(ctx, row.account),
    ])
    return pending > mined
  } catch {
    return false
  }
}

/**
 * EVM chains (`eip155`): broadcasts the signed transaction, follows its receipt (and those of the
 * versions it replaced), and replaces a send stuck past `replaceAfterMs` with the same nonce and
 * higher fees, within the ceilings and a sponsored send's caps.
 */
export const evmSender: ChainSender = {
  namespace: 'eip155',
  tracksWithoutLease: true,
  countsLostClaims: true,
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
    if (ALREADY_KNOWN.test(error.nodeText)) {
      // accepted before (a broadcast whose answer was lost): track it
    } else if (NONCE_TOO_LOW.test(error.nodeText)) {
      // Either this very transaction is already mined (broadcast before a crash) or another one
      // took the nonce: the receipt tells.
      if (await settle(ctx, row)) return
      if (mayBeOnANode(row) && row.nonce !== undefined) {
        // A version of it may be the one mined, its receipt not shown yet (a provider whose
        // receipts lag its count): its nonce looks taken, confirmed as a broadcast send's is.
        const now = ctx.runtime.now()
        const seen = row.nonceTakenSeenAt ?? now
        await waitOnEarlierVersion(ctx, row, {
          nonceTakenSeenAt: seen,
          notBefore: Math.max(now, seen + NONCE_TAKEN_CONFIRM_MS),
        })
        return
      }
      // No version of it can have reached a node: another transaction took the nonce.
      await ctx.fail(
        row,
        row.fills === undefined
          ? `the node refused the transaction: ${error.message}`
          : `nonce ${row.nonce} was taken by another transaction: nothing left to fill`,
        undefined,
        { keepSpend: mayBeOnANode(row) },
      )
      return
    } else if (row.fills !== undefined && expired(ctx, row)) {
      // A user's fill the node still refuses (an account that holds nothing to pay it with) is
      // not signed again past the expiry: given up, its nonce left a hole of the account's counter.
      await giveUpFill(
        ctx,
        row,
        `expired: the node still refused it ${SEND_EXPIRES_AFTER_MS / 3600_000} hours after it was made (${error.message}); the service no longer follows it`,
        'refused',
      )
      return
    } else if (UNDERPRICED.test(error.nodeText) && row.replacements < options.maxReplacements) {
      await replace(ctx, row)
      return
    } else if (row.fills !== undefined) {
      // A fill is not given up while its nonce is empty: signed again at the market's price, later.
      await refill(ctx, row)
      return
    } else if (
      mayBeOnANode(row) &&
      (row.priorHashes ?? []).length > 0 &&
      row.sponsored &&
      row.fills === undefined &&
      authorizationOf(row) !== undefined &&
      (await heldByTheUser(ctx, row, error.nodeText))
    ) {
      // A sponsored replacement carrying the user's authorization, refused for what the user may
      // keep up for good: made again without the authorization.
      await withoutAuthorization(ctx, row)
      return
    } else if (mayBeOnANode(row) && (row.priorHashes ?? []).length > 0) {
      // A replacement refused (its raised fee past what its sender holds, past a node's fee cap,
      // or its price still too low after the last raise): the version it replaces may be in a
      // node's pool and mined later. The send waits on it, and the replacement is tried again
      // `replaceAfterMs` later (`replacementRefused`): a sponsor or an account refunded meanwhile
      // has it raised and mined.
      await replacementRefused(ctx, row)
      return
    } else {
      await failUnmined(ctx, row, `the node refused the transaction: ${error.message}`)
      return
    }
  }
  await ctx.broadcasted(row)
}

/**
 * How long after its commit an unsponsored send (a user's own account's fill too) may go unmined
 * before it ends FAILED as expired and is no longer asked about: geth drops what waits in its pool
 * this long, and a send the node never mines (a nonce far past its sender's next, a fee under the
 * market that is never raised, a fill of an account that holds nothing) would otherwise cost node
 * calls on every pass for good. What it reserved under spending limits stays counted (anything
 * signed counts: a node may still hold it and mine it). A user's fill the node still refuses then
 * is given up too, and its nonce is left a hole of the account's counter, which the account's
 * next send takes. A sponsored send and a sponsor's fill are not given up: every user's later
 * sponsored sends wait behind the sponsor's nonce, so they are tracked, replaced and broadcast
 * again until one is mined.
 */
export const SEND_EXPIRES_AFTER_MS = 3 * 3600_000

/**
 * Whether the service signed `row` (`eth_send_transaction`, a fill): every such send records the fees
 * it signed; a raw send (`eth_send_raw_transaction`, bytes signed elsewhere) records none.
 */
const signedHere = (row: SendTransactionRow): boolean => row.fees !== undefined

/**
 * Whether `row` ends expired `SEND_EXPIRES_AFTER_MS` after its commit (`SEND_EXPIRES_AFTER_MS`): an
 * unsponsored send, and a fill of a user's own account; never a sponsored send or a sponsor's fill.
 */
const expires = (row: SendTransactionRow): boolean => !row.sponsored

/** Whether `row` expires and its time is up. */
const expired = (ctx: SendContext, row: SendTransactionRow): boolean =>
  expires(row) && ctx.runtime.now() - row.createdAt >= SEND_EXPIRES_AFTER_MS

/**
 * How long a user's expired fill whose nonce its counter has no room to keep as a hole
 * (`MAX_HOLES`) waits before it is looked at again: open, signed again at the market's price
 * (refused) or asked about (unmined) once an hour, until it is mined, the counter has room (the
 * account's sends take its holes), or it has waited `FILL_WAITS_FOR_ROOM_AT_MOST_MS`.
 */
export const FILL_WAITS_FOR_ROOM_MS = 3600_000

/**
 * How long past its expiry (`SEND_EXPIRES_AFTER_MS`) a user's fill waits for room among its
 * counter's holes (`FILL_WAITS_FOR_ROOM_MS`) before it is given up for good: FAILED, no longer
 * looked at, its nonce left empty (the account sends at it itself, naming it). Its cost is bounded
 * in time as well as in count (each counts in its organization's open sends, `MAX_OPEN_SENDS`):
 * at most 24 looks of 3 node calls (refused: signed again at the market's price and broadcast) or
 * of one per version it tracks (unmined).
 */
export const FILL_WAITS_FOR_ROOM_AT_MOST_MS = 24 * 3600_000

/** Thrown in a transaction to undo it: the counter keeps no more holes (`recordNonceHole`). */
class NoRoomForHole extends Error {}

/**
 * Ends a user's fill that expired (`SEND_EXPIRES_AFTER_MS`) FAILED, no longer followed, and records
 * its nonce as a hole of the account's counter in the same transaction, once (only while it was
 * open): the account's next send through the service takes it (`takeNonce`), so its later sends
 * are not left behind an empty nonce for good. A version of the fill still in a node's pool and
 * mined later leaves the hole below the node's count, where no send takes it. A counter that keeps
 * `MAX_HOLES` holes already has no room for it: the fill is not given up then (its nonce would be
 * neither filled nor a hole, every later send of the account signed behind it), but stays open,
 * looked at again `FILL_WAITS_FOR_ROOM_MS` later, until `FILL_WAITS_FOR_ROOM_AT_MOST_MS` past its
 * expiry: then it ends FAILED all the same, its nonce left empty, and its error says so.
 */
async function giveUpFill(
  ctx: SendContext,
  row: SendTransactionRow,
  message: string,
  how: 'refused' | 'unmined',
): Promise<void> {
  const waitedEnough =
    ctx.runtime.now() - row.createdAt >= SEND_EXPIRES_AFTER_MS + FILL_WAITS_FOR_ROOM_AT_MOST_MS
  // The error it ends with when its nonce is left empty; undefined when it became a hole.
  const hole = async (tx: StoreTransaction, current: SendTransactionRow): Promise<string | undefined> => {
    if (current.nonce === undefined || !(OPEN_STATUSES as readonly string[]).includes(current.status)) return
    const kept = await recordNonceHole(tx, {
      now: ctx.runtime.now(),
      caip2: current.caip2,
      address: current.sender,
      nonce: BigInt(current.nonce),
    })
    if (kept) return
    if (!waitedEnough) throw new NoRoomForHole()
    return `${message}; nonce ${current.nonce} of ${current.sender} is left empty (its counter keeps ${MAX_HOLES} holes already, and the fill waited ${FILL_WAITS_FOR_ROOM_AT_MOST_MS / 3600_000} hours for room): the account's later sends wait behind it until it sends at that nonce itself (naming \`nonce\` ${current.nonce})`
  }
  try {
    if (how === 'refused') {
      // Refused at its broadcast (its lease held): what it reserved goes back unless a version of
      // it may be on a node.
      await ctx.fail(row, message, hole, { keepSpend: mayBeOnANode(row) })
      return
    }
    // Tracked without a lease: only while open (another instance may have seen it mined
    // meanwhile); what it reserved stays counted, as for any send that reached a node.
    const changes: Partial<SendTransactionRow> = {
      status: 'FAILED',
      error: { message },
      notBefore: Number.MAX_SAFE_INTEGER,
    }
    const ended = await ctx.update(row, changes, {
      whileOpen: true,
      also: async (tx, current) => {
        const empty = await hole(tx, current)
        // Written with the rest (`update` reads `changes` after this).
        if (empty !== undefined) changes.error = { message: empty }
      },
    })
    if (ended) ctx.final(row, 'FAILED')
  } catch (error) {
    if (!(error instanceof NoRoomForHole)) throw error
    // Nothing of the transaction was written: the fill stays open and is looked at again later.
    const later = ctx.runtime.now() + FILL_WAITS_FOR_ROOM_MS
    if (how === 'refused') await refill(ctx, row, later)
    else await ctx.update(row, { notBefore: later }, { whileOpen: true })
  }
}

/**
 * The longest an unsponsored send that can only wait goes between looks (`waitingLookAt`): one
 * behind a nonce of its sender's that no mined transaction uses yet (no fee raise helps it), or
 * past its replacements.
 */
export const WAITING_LOOK_AT_MOST_MS = 5 * 60_000

/**
 * When a send that can only wait is looked at again; undefined for the next pass. A sponsored send
 * and a sponsor's fill are looked at every pass (every user's sponsored sends wait behind the
 * sponsor's nonce), and so is any send in its first `replaceAfterMs` or while a replacement of it is
 * still to come. An unsponsored one past them, behind a gap or at a price it keeps, a quarter of its
 * age later, at most `WAITING_LOOK_AT_MOST_MS`, and no later than its expiry: with the defaults, a
 * send queued behind a nonce nothing uses is looked at about 290 times over its 3 hours (each
 * pass of its first minute, then some 46 times) rather than 43,200, and one mined is seen within
 * a quarter of its age.
 */
function waitingLookAt(ctx: SendContext, row: SendTransactionRow, replaceable: boolean): number | undefined {
  const { options } = ctx
  if (!expires(row) || replaceable) return undefined
  const now = ctx.runtime.now()
  const age = now - row.createdAt
  if (age < options.replaceAfterMs) return undefined
  const wait = Math.min(WAITING_LOOK_AT_MOST_MS, Math.floor(age / 4))
  if (wait <= options.pollIntervalMs) return undefined
  return Math.min(now + wait, Math.max(now + options.pollIntervalMs, row.createdAt + SEND_EXPIRES_AFTER_MS))
}

/**
 * A look at a broadcast send: one `eth_getTransactionCount(sender, latest)`, then its receipts
 * only once that count has passed its nonce (no version of it can be mined before), one per
 * version it tracks. Past its nonce with none of them mined, the nonce is another transaction's:
 * the send is asked about once more, `NONCE_TAKEN_CONFIRM_MS` later, then ends FAILED
 * (`nonceTaken`), never replaced or given to the node again. A send whose nonce the count has
 * not reached waits behind a nonce of its sender's that no mined transaction uses: when its
 * replacement is due, it is replaced only if the node holds every nonce before it
 * (`queuedInOrder`: they wait on their price, and are replaced too); behind a gap no fee raise
 * fills it is not (only given to the node again should the node have dropped it). An unsponsored
 * send that can only wait is looked at less and less often (`waitingLookAt`).
 */
async function track(ctx: SendContext, row: SendTransactionRow): Promise<void> {
  const { runtime, options } = ctx
  const nonce = row.nonce === undefined ? undefined : BigInt(row.nonce)
  const mined = nonce === undefined ? undefined : await minedCount(ctx, row.sender)
  // Some transaction of the sender's at its nonce is mined (or, without a nonce, maybe).
  const used = mined === undefined || mined > nonce!
  if (used && (await settle(ctx, row))) return
  if (mined !== undefined && used) {
    // None of its versions is mined and its nonce is: none of them ever can be.
    await nonceTaken(ctx, row, mined)
    return
  }
  if (row.nonceTakenSeenAt !== undefined) {
    // A look before found its nonce used, this one does not (a reorg, or a node behind a load
    // balancer that answers an older count): it is followed as before, from the next pass.
    const claimed = await ctx.claim(row)
    if (claimed)
      await ctx.update(
        claimed,
        { nonceTakenSeenAt: undefined, notBefore: runtime.now() + options.pollIntervalMs },
        { whileOpen: true },
      )
    return
  }
  if (expired(ctx, row)) {
    // Ended for good on the count the pass shares, read perhaps long before this look
    // (`sharedInPass`): a version mined since would end FAILED while it is mined. The count is
    // asked afresh first, one call a send only at its expiry.
    if (ctx.sharedInPass && nonce !== undefined) {
      const fresh = await freshMinedCount(ctx, row.sender)
      if (fresh > nonce) {
        if (!(await settle(ctx, row))) await nonceTaken(ctx, row, fresh)
        return
      }
    }
    const hours = SEND_EXPIRES_AFTER_MS / 3600_000
    if (row.fills !== undefined) {
      await giveUpFill(
        ctx,
        row,
        `expired: not mined within ${hours} hours of its commit; the service no longer follows it (a node that still holds it may mine it, and what it reserved under spending limits stays counted)`,
        'unmined',
      )
      return
    }
    const ended = await ctx.update(
      row,
      {
        status: 'FAILED',
        error: {
          message: `expired: not mined within ${hours} hours of its commit; the service no longer follows it (a node that still holds it may mine it, and what it reserved under spending limits stays counted)`,
        },
        notBefore: Number.MAX_SAFE_INTEGER,
      },
      { whileOpen: true },
    )
    if (ended) ctx.final(row, 'FAILED')
    return
  }
  // Behind a nonce of its sender's that no mined transaction uses yet: its own price is not what
  // holds it, unless the node holds every nonce before it (they wait on their price too, and a
  // replacement of each raises it).
  const behind = mined !== undefined && mined < nonce!
  const canReplace = row.replacements < options.maxReplacements
  const stuck = runtime.now() - (row.broadcastAt ?? 0) > options.replaceAfterMs
  if (stuck && canReplace && (!behind || (await queuedInOrder(ctx, row)))) {
    // Re-signing is one instance's job: the lease decides which.
    const claimed = await ctx.claim(row)
    if (claimed) await replace(ctx, claimed)
    return
  }
  const later = waitingLookAt(ctx, row, canReplace && !behind)
  if (stuck) {
    const claimed = await ctx.claim(row)
    if (claimed) await rebroadcastIfDropped(ctx, claimed, later)
  } else if (later !== undefined) {
    // Under a lease, so that no other instance's replacement or final status is written over.
    const claimed = await ctx.claim(row)
    if (claimed) await ctx.update(claimed, { notBefore: later })
  }
  // Otherwise nothing changed and nothing is written: the next pass looks again.
}

/**
 * `eth_getTransactionCount(sender, latest)`: once a worker pass for every send of `sender` it looks
 * at (`sharedInPass`): 20 open sponsored sends cost the node one count a pass, not 20. A stale
 * one only puts a decision off, except an unsponsored send's expiry, which asks afresh (`track`).
 */
async function minedCount(ctx: SendContext, sender: string): Promise<bigint> {
  if (!ctx.sharedInPass) return freshMinedCount(ctx, sender)
  const call = () => freshMinedCount(ctx, sender).then(String)
  return BigInt(await ctx.sharedInPass(`eth_getTransactionCount ${sender.toLowerCase()} latest`, call))
}

/** `eth_getTransactionCount(sender, latest)` asked now, never the pass's shared answer. */
async function freshMinedCount(ctx: SendContext, sender: string): Promise<bigint> {
  return BigInt((await ctx.rpc('eth_getTransactionCount', [sender, 'latest'])) as string)
}

/**
 * How long after a look finds a send's nonce taken (its sender's mined count past it, no version of
 * it mined) the look that confirms it comes, and ends it FAILED (`nonceTaken`): a node behind a
 * load balancer whose receipts lag its count, a provider re-indexing its receipts, or a reorg,
 * does not end a send that is mined (a minute did: a mined send whose receipt showed 61 s after
 * the count ended FAILED for good, and an app retrying it ran its calls twice, at the sponsor's
 * cost for a sponsored one). Ten minutes: a node whose receipts lag its count by more is broken.
 */
export const NONCE_TAKEN_CONFIRM_MS = 10 * 60_000

/**
 * A send whose sender's mined count (`mined`) has passed its nonce while none of its versions has a
 * receipt: another transaction of its sender took the nonce (a raw send's signer sent another at
 * it straight to a node, the account's own send at it, a fill's send mined after all), so none of
 * them can ever be mined. The first look that finds it records when (`nonceTakenSeenAt`) and looks
 * again `NONCE_TAKEN_CONFIRM_MS` later; that look, finding the same (its receipts asked once
 * more), ends it FAILED saying so, no longer asked about. It is never replaced or given to the
 * node again meanwhile. What it reserved under spending limits, and a sponsored send's caps, stay
 * counted, as for any send that reached a node (anything signed counts). A fill ends the same
 * way: its nonce is used, nothing is left to fill.
 */
async function nonceTaken(ctx: SendContext, row: SendTransactionRow, mined: bigint): Promise<void> {
  const now = ctx.runtime.now()
  const seen = row.nonceTakenSeenAt
  if (seen === undefined || now - seen < NONCE_TAKEN_CONFIRM_MS) {
    // The first such look, or one come early (a backoff after a node that could not be reached):
    // the confirming look is at the time the first set.
    const claimed = await ctx.claim(row)
    if (claimed)
      await ctx.update(
        claimed,
        { nonceTakenSeenAt: seen ?? now, notBefore: (seen ?? now) + NONCE_TAKEN_CONFIRM_MS },
        { whileOpen: true },
      )
    return
  }
  const message =
    row.fills !== undefined
      ? `nonce ${row.nonce} was taken by another transaction: nothing left to fill`
      : `nonce ${row.nonce} of ${row.sender} was taken by another transaction (its mined count is ${mined}) and no version of this send was mined, so none can be; the service no longer follows it (what it reserved under spending limits${row.sponsored ? " and the sponsor's caps" : ''} stays counted)`
  const ended = await ctx.update(
    row,
    { status: 'FAILED', error: { message }, notBefore: Number.MAX_SAFE_INTEGER },
    { whileOpen: true },
  )
  if (ended) ctx.final(row, 'FAILED')
}

/**
 * A version of `row` the node refused (at its broadcast) while an earlier version of it may be on a
 * node, broadcast or mined: the send is BROADCASTED again, followed through every version it
 * tracks until one is mined, its nonce is confirmed taken (`nonceTaken`), or it expires, never
 * ended FAILED on the refusal. A replacement the node refused goes back to the version it replaced
 * where the node still answers it (`earlierVersion`): the row's signed transaction, hash and fees
 * are that version's again, and the refused one is kept among `refusedHashes`: the node took
 * nothing of it, but another instance past its lease may have handed that very version to a node
 * (its call on its way when the lease ran out), which may mine it, so its receipt is still asked
 * (`settle`). Where the node does not answer it, the refused version stays the row's and every
 * version stays tracked. `changes` are written with it.
 */
async function waitOnEarlierVersion(
  ctx: SendContext,
  row: SendTransactionRow,
  changes: Partial<SendTransactionRow>,
): Promise<void> {
  const earlier = await earlierVersion(ctx, row)
  await ctx.update(
    row,
    {
      ...earlier,
      ...(earlier ? { refusedHashes: refusedWith(row) } : {}),
      status: 'BROADCASTED',
      ...changes,
    },
    { whileOpen: true, whileVersion: row.txHash },
  )
}

/**
 * A replacement of `row` the node refused for what may pass (its raised fee past what its sender
 * holds, a node's fee cap, its price still too low): the send goes back to the version it replaced
 * (`waitOnEarlierVersion`), and the replacement is tried again, through every ceiling and cap
 * `replace` judges it by, no sooner than `replaceAfterMs` later (its `broadcastAt` is now; a
 * sponsored send is looked at every pass meanwhile, an unsponsored one only then: `retryAt`), so a
 * sponsor (or an account) refunded since has it raised and mined, and every user's later sponsored
 * sends, waiting behind the sponsor's nonce, flow again. The refused replacement does not count
 * among its `replacements` (the node took nothing of it). Its raise, counted against a sponsored
 * send's caps when it was signed (`countReplacement`), stays counted and is not counted again:
 * `prepaidMaxFeePerGas` is lifted to its fee, as what the caps have counted. Where the node does
 * not answer the version it replaced (dropped from its pool), the refused version stays the row's,
 * replaced no more: given to the node again each `replaceAfterMs` as it is
 * (`rebroadcastIfDropped`), never raised past it. A sponsored replacement carrying the user's
 * authorization, refused for what the user can keep up (`HELD_BY_THE_USER`), is not tried again as
 * it was: it is made again without the authorization (`withoutAuthorization`).
 */
async function replacementRefused(ctx: SendContext, row: SendTransactionRow): Promise<void> {
  const { runtime, options } = ctx
  const earlier = await earlierVersion(ctx, row)
  const now = runtime.now()
  if (!earlier) {
    await ctx.update(
      row,
      {
        status: 'BROADCASTED',
        replacements: options.maxReplacements,
        notBefore: now + options.pollIntervalMs,
      },
      { whileOpen: true, whileVersion: row.txHash },
    )
    return
  }
  const refusedFee = BigInt(row.fees!.maxFeePerGas)
  const prepaid = BigInt(row.prepaidMaxFeePerGas ?? '0')
  const counted = row.sponsored && refusedFee > prepaid ? { prepaidMaxFeePerGas: refusedFee.toString() } : {}
  await ctx.update(
    row,
    {
      ...earlier,
      ...counted,
      refusedHashes: refusedWith(row),
      status: 'BROADCASTED',
      replacements: Math.max(0, row.replacements - 1),
      broadcastAt: now,
      notBefore: retryAt(ctx, row),
    },
    { whileOpen: true, whileVersion: row.txHash },
  )
}

/**
 * A sponsored replacement carrying the user's authorization (the batch that delegates the account)
 * that the node refused for what the user can keep up (`HELD_BY_THE_USER`): geth refuses any
 * transaction carrying the authorization of an account that keeps a transaction of its own pending
 * ("authority already reserved"), which the user can keep up for free for as long as it likes.
 * Tried again as it is, it would be refused every time, and the version it replaced, priced under
 * the base fee, never mined: the sponsor's nonce held, and every user's later sponsored sends
 * behind it. So it is made again at once, the same batch at the same nonce and fees (the raise
 * counted when it was signed, counted no more) without its `authorizationList` (EIP-1559), signed
 * by the sponsor and broadcast at the next pass; the versions before it stay tracked, and so does
 * the refused one (`refusedHashes`: another instance past its lease may have handed it to a node,
 * which may mine it; it then ends the send as an earlier version would). Mined while
 * the account delegates to the Latchkey delegate, it runs the batch (INCLUDED); otherwise its
 * call reaches an account without code and the send ends FAILED "the batch did not run" (the fee
 * paid, `batchOutcome`); should an earlier version be mined instead, the send ends as that version
 * did. The authorization's nonce of the account becomes a hole of the account's counter now (no
 * later version carries it), which its next send takes unless the node's count passed it (an
 * earlier version mined with it: `takeNonce` takes no hole below the count). What the send
 * reserved under spending limits stays counted (anything signed counts).
 */
async function withoutAuthorization(ctx: SendContext, row: SendTransactionRow): Promise<void> {
  const { runtime } = ctx
  const { authorizationList: _list, ...unsigned } = unsignedFieldsOf(
    Transaction.fromHex(row.signedTransaction),
  )
  const sponsor = row.sponsorId === undefined ? undefined : await runtime.store.get('sponsors', row.sponsorId)
  if (!sponsor) {
    await ctx.fail(row, 'the sponsor account is gone', undefined, { keepSpend: mayBeOnANode(row) })
    return
  }
  const key = runtime.open(sponsor.sealedPrivateKey)
  let signed: string
  try {
    signed = Transaction.prepare({ ...unsigned, type: 'eip1559' } as never)
      .signBy(key)
      .toHex()
  } finally {
    key.fill(0)
  }
  const authorization = authorizationOf(row)!
  const now = runtime.now()
  await ctx.update(
    row,
    {
      signedTransaction: signed,
      txHash: Transaction.fromHex(signed).hash,
      refusedHashes: refusedWith(row),
      notBefore: 0,
    },
    {
      whileOpen: true,
      // Only over the version it refused: another instance that took the send meanwhile (a lease
      // run out) may have recorded a version of its own, which may be on a node.
      whileVersion: row.txHash,
      also: async (tx) => {
        // Past the holes a counter keeps, the nonce is left empty, as for a batch that did not run.
        await recordNonceHole(tx, { now, caip2: row.caip2, address: row.account, nonce: authorization.nonce })
      },
    },
  )
}

/**
 * When a send whose replacement the node refused is looked at again (`replacementRefused`): a
 * sponsored send or a sponsor's fill at the next pass, as always (every user's sponsored sends wait
 * behind the sponsor's nonce; its replacement is tried again once `replaceAfterMs` has passed); an
 * unsponsored one once its replacement is due again, or later as `waitingLookAt` backs off (a
 * quarter of its age, at most `WAITING_LOOK_AT_MOST_MS`), and no later than its expiry: a drained
 * account's send costs the node a look and a try each time (its count, the replacement refused, the
 * version it replaced asked for), not a look every pass for its 3 hours.
 */
function retryAt(ctx: SendContext, row: SendTransactionRow): number {
  const { options } = ctx
  const now = ctx.runtime.now()
  if (!expires(row)) return now + options.pollIntervalMs
  const backoff = Math.min(WAITING_LOOK_AT_MOST_MS, Math.floor((now - row.createdAt) / 4))
  const wait = Math.max(options.replaceAfterMs + 1, backoff)
  return Math.min(now + wait, Math.max(now + options.pollIntervalMs, row.createdAt + SEND_EXPIRES_AFTER_MS))
}

/**
 * How many versions a node refused a send keeps asking about (`refusedHashes`), the latest: a
 * sponsored send's refused replacement is tried again each `replaceAfterMs` for as long as it is
 * refused, and a sponsor's fill signed again after each refusal, each a version of its own (a
 * signature is random), so the list is bounded. A version handed to a node by an instance past its
 * lease reaches it within that instance's call, while the send's next versions are made.
 */
export const MAX_REFUSED_VERSIONS = 8

/**
 * `row`'s `refusedHashes` with its current version (the one the node refused, which the send no
 * longer carries once this is written) added, the latest `MAX_REFUSED_VERSIONS`: a node refused
 * it, but another instance past its lease may have handed that very version to a node, which may
 * mine it. Its receipt is asked as the other versions' are (`settle`), so the send never ends
 * FAILED "no version of this send was mined" while it is.
 */
const refusedWith = (row: SendTransactionRow): string[] =>
  [...(row.refusedHashes ?? []).filter((hash) => hash !== row.txHash), row.txHash].slice(
    -MAX_REFUSED_VERSIONS,
  )

/**
 * The version of `row` its last replacement replaced (the last of `priorHashes`), rebuilt from the
 * node's `eth_getTransactionByHash`: the replacement's own fields at that version's fees and
 * signature, which must hash to it. What the row records of it (with `priorHashes` less it);
 * undefined when the node does not answer it or what it answers does not rebuild it (a signature
 * is random: signing its fields again would make another transaction).
 */
async function earlierVersion(
  ctx: SendContext,
  row: SendTransactionRow,
): Promise<Partial<SendTransactionRow> | undefined> {
  const prior = row.priorHashes ?? []
  const hash = prior.at(-1)
  if (hash === undefined || !row.fees) return undefined
  const found = (await ctx.rpc('eth_getTransactionByHash', [hash])) as Record<string, unknown> | null
  if (!found) return undefined
  const [maxFeePerGas, maxPriorityFeePerGas, r, s, yParity] = [
    found.maxFeePerGas,
    found.maxPriorityFeePerGas,
    found.r,
    found.s,
    found.yParity ?? found.v,
  ].map(rpcQuantity)
  if (
    maxFeePerGas === undefined ||
    maxPriorityFeePerGas === undefined ||
    r === undefined ||
    s === undefined ||
    (yParity !== 0n && yParity !== 1n)
  )
    return undefined
  try {
    const refused = Transaction.fromHex(row.signedTransaction)
    const unsigned = unsignedFieldsOf(refused)
    const version = new Transaction(
      refused.type,
      { ...unsigned, maxFeePerGas, maxPriorityFeePerGas, r, s, yParity: Number(yParity) } as never,
      { strict: false },
    )
    if (version.hash.toLowerCase() !== hash.toLowerCase()) return undefined
    return {
      signedTransaction: version.toHex(),
      txHash: hash,
      priorHashes: prior.length > 1 ? prior.slice(0, -1) : undefined,
      fees: {
        gasLimit: row.fees.gasLimit,
        maxFeePerGas: maxFeePerGas.toString(),
        maxPriorityFeePerGas: maxPriorityFeePerGas.toString(),
      },
    }
  } catch {
    return undefined
  }
}

/**
 * Whether the node holds every nonce of `row`'s sender before its own (its pending count has
 * passed it): the send waits on their price, not behind a gap (a nonce no transaction the node
 * holds uses, which no fee raise fills). One more node call, made only when a replacement of a
 * send behind its sender's mined count is due.
 */
async function queuedInOrder(ctx: SendContext, row: SendTransactionRow): Promise<boolean> {
  return (await pendingCount(ctx, row.sender)) > BigInt(row.nonce!)
}

/** `eth_getTransactionCount(address, pending)`: its mined count and what the node's pool holds of it. */
async function pendingCount(ctx: SendContext, address: string): Promise<bigint> {
  return BigInt((await ctx.rpc('eth_getTransactionCount', [address, 'pending'])) as string)
}

/**
 * A send past its replacements (or one no replacement may be made of: at the ceiling, past a
 * cap) waits at its price. A node drops what waits long in its pool (geth after three hours) or
 * loses it when it restarts: the send would then never be mined, and every later transaction of
 * its sender (a sponsor's: every user's) would wait behind its nonce for good. Each
 * `replaceAfterMs` (an unsponsored send that can only wait: at its next look, `later`), the node is
 * asked whether it still has it, and given it again if not. So is a send waiting behind a gap of
 * its sender's nonces, which no replacement helps.
 */
async function rebroadcastIfDropped(
  ctx: SendContext,
  row: SendTransactionRow,
  later?: number,
): Promise<void> {
  const { runtime, rpc, options } = ctx
  if (!(await rpc('eth_getTransactionByHash', [row.txHash]))) {
    const accepted = await rpc('eth_sendRawTransaction', [row.signedTransaction]).then(
      () => true,
      (error) => {
        // Mined meanwhile (nonce too low: the receipt tells next pass), known, or priced out: it waits.
        if (!(error instanceof RpcRefusedError)) throw error
        return false
      },
    )
    runtime.emit('send.rebroadcast', { chain: 'eip155', accepted })
  }
  const now = runtime.now()
  await ctx.update(row, { broadcastAt: now, notBefore: later ?? now + options.pollIntervalMs })
}

interface Receipt {
  status: string
  blockNumber: string
  blockHash: string
  gasUsed: string
  effectiveGasPrice?: string
  /** What it paid for its L1 data, wei (an OP Stack or Scroll node's receipts carry it). */
  l1Fee?: string
  /** An OP Stack node's since Isthmus: the operator fee's parameters (`operatorFeePaid`). */
  operatorFeeScalar?: string
  operatorFeeConstant?: string
  /** An OP Stack node's since Jovian, whose operator fee formula differs. */
  daFootprintGasScalar?: string
  from: string
  to: string | null
  logs?: { address: string; topics: string[] }[]
}

/**
 * What a mined batch that `eth_send_transaction` made did: `notRun`, why it ran none of its calls,
 * or `ran`, the delegate nonce it ran with; undefined when `row` is no such batch. A batch is the
 * account's call to itself, which runs the delegate's `execute` only if the account delegates to
 * it when the transaction is mined: an authorization not valid by then (its nonce no longer the
 * account's) is skipped, and the call reaches an account without code, which succeeds and does
 * nothing. The delegate logs `BatchExecuted` from the account whenever it runs a batch: without
 * that log, nothing ran.
 */
async function batchOutcome(
  ctx: SendContext,
  row: SendTransactionRow,
  logs: Receipt['logs'],
): Promise<{ notRun: string } | { ran: bigint } | undefined> {
  const { to, data } = Transaction.fromHex(row.signedTransaction).raw as { to?: string; data?: string }
  if (
    !to ||
    to.toLowerCase() !== row.account.toLowerCase() ||
    !data?.toLowerCase().startsWith(EXECUTE_SELECTOR_HEX)
  )
    return undefined
  // Only the service's own batches: a transaction signed elsewhere may run another delegate.
  if ((await ctx.runtime.store.get('activities', row.activityId))?.path !== 'eth_send_transaction')
    return undefined
  const relayer = `0x${row.sender.toLowerCase().replace(/^0x/, '').padStart(64, '0')}`
  const ran = (logs ?? []).find(
    (log) =>
      log.address.toLowerCase() === row.account.toLowerCase() &&
      log.topics[0]?.toLowerCase() === BATCH_EXECUTED_TOPIC &&
      log.topics[2]?.toLowerCase() === relayer,
  )
  const nonce = rpcQuantity(ran?.topics[1])
  if (nonce !== undefined) return { ran: nonce }
  return {
    notRun: `the batch did not run: ${row.account} did not delegate to the Latchkey delegate when the transaction was mined (its authorization no longer valid then), so its call to itself ran no code and none of the batch's calls was made; the transaction's fee was paid`,
  }
}

/** The authorization a send's transaction carries (a batch that delegates the account), if any. */
function authorizationOf(row: SendTransactionRow): { nonce: bigint } | undefined {
  const raw = Transaction.fromHex(row.signedTransaction).raw as { authorizationList?: { nonce: bigint }[] }
  return raw.authorizationList?.[0]
}

/**
 * Records the final status when a version of the send is mined; false while none is. Every version
 * a node may have been handed is asked about: the send's, those its replacements superseded
 * (`priorHashes`), and those a node refused that it no longer carries (`refusedHashes`), which
 * another instance past its lease may have given a node after the refusal. A refused version mined
 * ends the send as any version does, its fee paid counted.
 */
async function settle(ctx: SendContext, row: SendTransactionRow): Promise<boolean> {
  for (const hash of new Set([row.txHash, ...(row.priorHashes ?? []), ...(row.refusedHashes ?? [])])) {
    const receipt = (await ctx.rpc('eth_getTransactionReceipt', [hash])) as Receipt | null
    if (!receipt) continue
    const summary = {
      blockNumber: BigInt(receipt.blockNumber).toString(),
      blockHash: receipt.blockHash,
      gasUsed: BigInt(receipt.gasUsed).toString(),
      effectiveGasPrice: BigInt(receipt.effectiveGasPrice ?? '0x0').toString(),
      status: receipt.status === '0x1' ? ('success' as const) : ('reverted' as const),
    }
    const outcome = summary.status === 'success' ? await batchOutcome(ctx, row, receipt.logs) : undefined
    const notRun = outcome && 'notRun' in outcome ? outcome.notRun : undefined
    const status = summary.status === 'success' && !notRun ? 'INCLUDED' : 'FAILED'
    const error = notRun
      ? { message: notRun }
      : status === 'FAILED'
        ? await revertReasonOf(ctx.rpc, Transaction.fromHex(row.signedTransaction), receipt)
        : undefined
    // What it paid in fees: its native spending limits keep that instead of the most it could
    // have cost (reserved when it was signed); the most where the node does not say. On an OP
    // Stack or Scroll chain that includes the L1 data fee, and on an OP Stack chain the operator
    // fee, each as the receipt reports it, or else as counted.
    const l1Fee = rpcQuantity(receipt.l1Fee) ?? BigInt(row.l1Fee ?? '0')
    const operatorFee = operatorFeePaid(receipt, BigInt(summary.gasUsed)) ?? BigInt(row.operatorFee ?? '0')
    const paidFee =
      receipt.effectiveGasPrice === undefined
        ? undefined
        : BigInt(summary.gasUsed) * BigInt(summary.effectiveGasPrice) + l1Fee + operatorFee
    // A batch that did not run skipped its authorization: the account's nonce it took is unused
    // unless the account's count passed it meanwhile (`takeNonce` takes no hole below the node's
    // count), a hole its next send takes. One that ran spent its delegate nonce: the account's
    // delegate counter never starts again below the next (`NonceRow.least`).
    const skipped = notRun ? authorizationOf(row) : undefined
    const ran = outcome && 'ran' in outcome ? outcome.ran : undefined
    const now = ctx.runtime.now()
    const also = skipped
      ? async (tx: StoreTransaction) => {
          // Past the holes a counter keeps, the nonce is left empty, as before (nothing of the
          // batch is open to keep it).
          await recordNonceHole(tx, { now, caip2: row.caip2, address: row.account, nonce: skipped.nonce })
        }
      : ran !== undefined
        ? (tx: StoreTransaction) =>
            raiseNonceFloor(tx, {
              now,
              caip2: delegateCounterOf(row.caip2),
              address: row.account,
              least: ran + 1n,
            })
        : undefined
    const settled = await ctx.update(
      row,
      {
        status,
        txHash: hash,
        receipt: summary,
        ...(error ? { error } : {}),
        notBefore: Number.MAX_SAFE_INTEGER,
      },
      {
        whileOpen: true,
        ...(paidFee === undefined ? {} : { paidFee }),
        ...(also ? { also } : {}),
      },
    )
    if (settled) ctx.final(row, status)
    return true
  }
  return false
}

/** The id of the fill of `send`'s nonce: one per refused send, so a rerun writes none twice. */
export const fillIdOf = (sendId: string) => `${sendId}.fill`

/**
 * The id of the fill of the nonce an unsponsored batch's authorization took (its own nonce + 1,
 * the account delegating itself): the second fill of that refused send.
 */
export const authorizationFillIdOf = (sendId: string) => `${sendId}.fill.authorization`

/**
 * Marks a send the node refused (no version of it mined) FAILED, and leaves no hole at its nonce,
 * in the same transaction: its nonce (and its authorization's, of the user's account) goes back to
 * its counter when it was the last one taken and the node never had a version of it; otherwise a
 * fill takes it (and another its authorization's, for an unsponsored batch that was to delegate
 * the account): a 0-value transfer from the send's sender to itself at the market's price (under
 * the ceiling), signed here, broadcast and tracked by the worker like any send until a transaction
 * at that nonce is mined. The sponsor's nonce is shared by every user: left empty, every later
 * sponsored send would wait in the node's queue for good. A user's account fills its own (its
 * later sends would wait the same way), its fee counted first under the account's native spending
 * limits; a limit without room for it leaves the nonce empty, and the FAILED send's error says so.
 * All that only for a nonce the service's counter gave the send (`nonceCounted`): one it signed
 * without the caller naming it, or a raw send of its organization's own account whose nonce the
 * counter took. Any other send (one at a nonce its caller named, a transaction of a sponsor or of
 * another organization's account, an earlier version of a send still open at that nonce) just ends
 * FAILED: no counter moves, nothing is filled. A nonce the caller named never went through the
 * counter: filled, the fill of an account that holds nothing, or of a nonce past its next, would be
 * broadcast or asked about for the caller for free.
 */
async function failUnmined(ctx: SendContext, row: SendTransactionRow, message: string): Promise<void> {
  const { runtime, options } = ctx
  if (!(await nonceCounted(runtime.store, row))) {
    await ctx.fail(row, message, undefined, { keepSpend: mayBeOnANode(row) })
    return
  }
  // The market's fees are asked before the transaction (no node call runs inside one); the fill is
  // signed in it, and only when the nonce is not given back.
  const fees = row.nonce !== undefined ? await fillFees(ctx, row) : undefined
  await ctx.fail(
    row,
    message,
    async (tx, current) => {
      if (current.nonce === undefined || !fees) return
      const now = runtime.now()
      let given = false
      let authorizationGiven = false
      // The user's nonce its authorization took (a batch the service signed that delegates the
      // account), if any: a raw send's authorization, signed elsewhere, took no counter's nonce.
      const authorization = signedHere(current) ? authorizationOf(current) : undefined
      // Never taken by the node as far as the service knows (`mayBeOnANode`).
      if (!mayBeOnANode(current)) {
        // The authorization's nonce first (the later one, when the user sends it), then the outer one.
        if (authorization)
          authorizationGiven = await giveBackNonce(tx, {
            now,
            caip2: current.caip2,
            address: current.account,
            nonce: authorization.nonce,
          })
        given = await giveBackNonce(tx, {
          now,
          caip2: current.caip2,
          address: current.sender,
          nonce: BigInt(current.nonce),
        })
      }
      // A sponsored send's authorization took the account's nonce, which no fill takes (the account
      // may hold nothing to pay one with): a hole of the account's counter, which its next send takes.
      // Only the first time (a later pass sees the send FAILED, its hole perhaps taken since).
      const open = (OPEN_STATUSES as readonly string[]).includes(current.status)
      if (authorization && current.sender !== current.account && !authorizationGiven && open)
        await recordNonceHole(tx, {
          now,
          caip2: current.caip2,
          address: current.account,
          nonce: authorization.nonce,
        })
      // Recorded once, whichever pass or instance gets here again.
      if (given || (await tx.get('sendTransactions', fillIdOf(current.id)))) return
      const signer = await fillSignerOf(tx, current)
      // A sponsor removed, or an account whose key the service does not hold: no fill.
      if (!signer) return
      if ('sponsor' in signer) {
        const fill = signFill(runtime, current, fees, signer)
        await tx.put('sendTransactions', fill)
        await countSponsorFill(runtime, tx, current, { id: fill.id, maxFeePerGas: fees.maxFeePerGas })
        return
      }
      // The user's own account pays for its fills: each counted under its native spending limits
      // first. An unsponsored batch that delegated the account took two of its nonces, its own and
      // its authorization's (the next): both are filled, or the later sends wait behind the second.
      const nonces = [{ nonce: BigInt(current.nonce), id: fillIdOf(current.id) }]
      if (current.sender === current.account && authorization?.nonce === BigInt(current.nonce) + 1n)
        nonces.push({ nonce: authorization.nonce, id: authorizationFillIdOf(current.id) })
      // Each fill counts in the organization's open sends (`MAX_OPEN_SENDS`, as `recordSend` counts
      // them): only those that fit are made (the refused send, ended here, makes room for one), so
      // what the worker asks the node about for one organization stays within its cap.
      const organization = await tx.get('organizations', current.organizationId)
      const most = organization?.parentOrganizationId
        ? MAX_OPEN_SENDS.subOrganization
        : MAX_OPEN_SENDS.organization
      let openSends = (await tx.count('sendTransactions', 'openIn', current.organizationId)) - (open ? 1 : 0)
      const reservedFee = 21_000n * mostMaxFeePerGas(fees.maxFeePerGas, options)
      for (const [i, { nonce, id }] of nonces.entries()) {
        const refusal =
          openSends >= most
            ? `organization ${current.organizationId} has ${openSends} sends not yet final, at most ${most} (openSendsPerOrganization)`
            : await reserveFill(runtime, tx, current, { account: signer.account, reservedFee, id })
        if (refusal !== undefined) {
          // Left empty: holes of the account's counter, which its next sends take (none past the
          // holes it keeps: the nonce is then the account's to send at itself).
          const lost: bigint[] = []
          if (open)
            for (const hole of nonces.slice(i)) {
              const kept = await recordNonceHole(tx, {
                now,
                caip2: current.caip2,
                address: current.account,
                nonce: hole.nonce,
              })
              if (!kept) lost.push(hole.nonce)
            }
          const until =
            lost.length === 0
              ? 'until its next send through the service takes that nonce (or it sends at it itself)'
              : `until it sends at nonce ${lost.join(' and ')} itself, naming \`nonce\` (its counter keeps ${MAX_HOLES} holes already)`
          return `${message}; nonce ${nonce} of ${current.sender} was not filled, and the account's later sends wait behind it ${until}: ${refusal}`
        }
        const fill = signFill(runtime, { ...current, nonce: nonce.toString() }, fees, signer)
        await tx.put('sendTransactions', { ...fill, id, reservedFee: reservedFee.toString() })
        openSends++
      }
    },
    { keepSpend: mayBeOnANode(row) },
  )
}

/**
 * Whether the service's counter of `row`'s sender gave it its nonce (`countedNonce`). A row of
 * `eth_send_transaction` written before that was recorded on it (or by an instance not yet
 * upgraded, during a rolling upgrade) is judged as it was sent: a sponsored send's nonce is always
 * the counter's (a sponsored send names none); an unsponsored one's is unless its activity named a
 * `nonce` (its intent, the parameters as sent). A raw send's is only when recorded so.
 */
async function nonceCounted(reads: Reads, row: SendTransactionRow): Promise<boolean> {
  if (row.countedNonce === true) return true
  if (!signedHere(row)) return false
  if (row.sponsored) return true
  const activity = await reads.get('activities', row.activityId)
  // An activity gone with its organization: as before (the account's key is gone with it, so
  // nothing is filled anyway).
  if (!activity) return true
  return activity.path !== 'eth_send_transaction' || activity.intent.nonce === undefined
}

/**
 * Whether a node may hold the send: broadcast (a replacement keeps the first broadcast's time),
 * or a broadcast whose answer was lost (a gateway's 504 after it forwarded it, a timeout: each
 * counts an attempt). Such a send failed later keeps its nonce and what it reserved under spending
 * limits: anything signed that may reach the chain counts.
 */
const mayBeOnANode = (row: SendTransactionRow): boolean => row.broadcastAt !== undefined || row.attempts > 0

/**
 * Whether a node may hold `row`'s current version (`mayBeOnANode` of it alone): broadcast, or an
 * attempt of it whose answer was lost since it was signed (`signedAtAttempt`). A fill signed again
 * after its versions were only ever refused keeps them among `refusedHashes` rather than
 * `priorHashes` (an instance past its lease may have handed one to a node all the same).
 */
const versionMayBeOnANode = (row: SendTransactionRow): boolean =>
  row.broadcastAt !== undefined || row.attempts > (row.signedAtAttempt ?? 0)

/** What the worker counts a send's cost with (`checkGasCaps`): as `userId` of `organization` sent it. */
const workerCaps = (
  runtime: SendContext['runtime'],
  tx: StoreTransaction,
  organization: CapsOrganization,
  userId: string,
): CapContext => ({
  tx,
  runtime,
  now: runtime.now(),
  organization,
  newId: () => runtime.newId(),
  caller: { userId },
})

/**
 * Counts a sponsor's fill of the nonce `current` took against the gas caps of the user who sent
 * `current`, in the transaction that records the fill: 21,000 gas, and its wei at the fill's max
 * fee. The fill is priced at the market's fee whatever `current` offered, so counting only what
 * `current` reserved would let a user who sends cheaply priced sends that the node refuses make
 * the sponsor pay for fills no cap sees. Counted even past a cap (the nonce must be filled): the
 * user's next sponsored sends then find the cap used. A sub-organization deleted since: under its
 * parent's monthly caps (the parent recorded on the send), the end user's day counted too.
 */
async function countSponsorFill(
  runtime: SendContext['runtime'],
  tx: StoreTransaction,
  current: SendTransactionRow,
  { id: fillId, maxFeePerGas }: { id: string; maxFeePerGas: bigint },
): Promise<void> {
  const [activity, organization] = await Promise.all([
    tx.get('activities', current.activityId),
    capsOrganizationOf(tx, current),
  ])
  if (!activity || !organization) return
  const ctx = workerCaps(runtime, tx, organization, activity.userId)
  await checkGasCaps(ctx, { gas: 21_000n, sendTransactionId: fillId, force: true })
  await checkGasCaps(ctx, {
    gas: 21_000n * maxFeePerGas,
    sendTransactionId: fillId,
    unit: 'wei',
    force: true,
  })
}

/**
 * Counts a fill of a user's account under the native spending limits that cover the account, in
 * the transaction that records it (under the organization's spend lock, which `fail` holds): its
 * most fee, `reservedFee` (21,000 gas at the highest fee it or a replacement of it may be signed
 * at; it moves no value). The limits that covered the refused send's submitter (its user, its API
 * key, its session profile) cover its fill: the credential the send recorded (`submittedWith`),
 * even one gone since (a session that signed out before the refusal was seen). Undefined once
 * counted; the refusal's message when a limit has no room for it (nothing is counted then, and no
 * fill is made).
 */
async function reserveFill(
  runtime: SendContext['runtime'],
  tx: StoreTransaction,
  current: SendTransactionRow,
  { account, reservedFee, id }: { account: WalletAccountRow; reservedFee: bigint; id: string },
): Promise<string | undefined> {
  const activity = await tx.get('activities', current.activityId)
  const unsigned = { publicKey: '', scheme: '', signature: '' }
  // The credential the send was counted under, as it recorded it. A send recorded before it did
  // (or by an instance not yet upgraded): the submitter as they are now; one gone since still has
  // their user's and account's limits count the fill, under the credential the send named.
  const caller = current.submittedWith
    ? { userId: activity?.userId ?? '', credential: { ...unsigned, ...current.submittedWith } }
    : ((activity && (await submitterOf(tx, activity))) ?? {
        userId: activity?.userId ?? '',
        credential: { kind: 'WEBAUTHN' as const, id: activity?.credentialId ?? '', ...unsigned },
      })
  try {
    await reserveSpend(
      { tx, runtime, now: runtime.now(), organizationId: current.organizationId, caller },
      {
        signer: account.address,
        key: { curve: account.curve, publicKey: account.publicKey },
        describe: () => ({ kind: 'evm', caip2: current.caip2, calls: [], fee: reservedFee }),
        reference: id,
      },
    )
  } catch (error) {
    // The guard checks every limit before it writes any: a refusal leaves them all as they were.
    if (error instanceof ApiError && error.status < 500) return error.message
    throw error
  }
  return undefined
}

/**
 * The market's fees for a fill of `row`'s nonce, under the operator's ceilings (a sponsor's: its
 * organization's sponsorship ceilings; a user's account: `sending.maxFeePerGasCeiling`).
 */
async function fillFees(ctx: SendContext, row: SendTransactionRow) {
  const { runtime, rpc, options } = ctx
  const organization = row.sponsorId !== undefined ? await capsOrganizationOf(runtime.store, row) : undefined
  let ceiling = {
    maxFeePerGas: BigInt(options.maxFeePerGasCeiling),
    maxPriorityFeePerGas: BigInt(options.maxFeePerGasCeiling),
  }
  if (organization) ceiling = feeCeilingsOf(runtime, organization)
  const [block, suggested] = await Promise.all([
    rpc('eth_getBlockByNumber', ['latest', false]) as Promise<{ baseFeePerGas?: string }>,
    rpc('eth_maxPriorityFeePerGas', []) as Promise<string>,
  ])
  const min = (a: bigint, b: bigint) => (a < b ? a : b)
  const max = (a: bigint, b: bigint) => (a > b ? a : b)
  const baseFee = BigInt(block.baseFeePerGas ?? '0x0')
  // Over the market, and over what the send it fills offered (a version of it may be in the pool).
  const before = row.fees ?? { maxFeePerGas: '0', maxPriorityFeePerGas: '0' }
  const bump = (value: string) => bumpFee(BigInt(value), options.replacementBumpPercent)
  const tip = min(max(BigInt(suggested), bump(before.maxPriorityFeePerGas)), ceiling.maxPriorityFeePerGas)
  const maxFeePerGas = min(max(2n * baseFee + tip, bump(before.maxFeePerGas)), ceiling.maxFeePerGas)
  return { maxFeePerGas, maxPriorityFeePerGas: min(tip, maxFeePerGas) }
}

/** Whose key signs a fill of `row`'s nonce: its sponsor's, or (unsponsored) its sender account's. */
type FillSigner = { sponsor: SponsorRow } | { account: WalletAccountRow }

/**
 * The key a fill of `row`'s nonce is signed with; undefined when it is gone (a sponsor removed, an
 * account deleted) or the service never held it (`eth_send_raw_transaction` from elsewhere).
 */
async function fillSignerOf(reads: Reads, row: SendTransactionRow): Promise<FillSigner | undefined> {
  if (row.sponsorId !== undefined) {
    const sponsor = await reads.get('sponsors', row.sponsorId)
    return sponsor ? { sponsor } : undefined
  }
  const account = await findSigner(reads, row.organizationId, row.sender, 'sender').catch(() => undefined)
  return account?.curve === 'CURVE_SECP256K1' ? { account } : undefined
}

/**
 * Signs a fill of `row`'s nonce at `fees`: a 0-value transfer from its sender to itself, gas limit
 * 21,000, with the sponsor's key or the user's account's (opened, used and wiped here).
 */
function signFill(
  runtime: SendContext['runtime'],
  row: SendTransactionRow,
  fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  signer: FillSigner,
): SendTransactionRow {
  const { chainId } = Transaction.fromHex(row.signedTransaction).raw as { chainId: bigint }
  const sign = (key: Uint8Array) =>
    Transaction.prepare({
      type: 'eip1559',
      chainId,
      to: row.sender,
      value: 0n,
      data: '0x',
      nonce: BigInt(row.nonce!),
      gasLimit: 21_000n,
      ...fees,
    })
      .signBy(key)
      .toHex()
  let signed: string
  if ('sponsor' in signer) {
    const key = runtime.open(signer.sponsor.sealedPrivateKey)
    try {
      signed = sign(key)
    } finally {
      key.fill(0)
    }
  } else signed = withAccountKey(runtime, signer.account, sign)
  const fills = row.fills ?? row.id
  return pendingSend(runtime.now(), {
    id: fillIdOf(fills),
    organizationId: row.organizationId,
    activityId: row.activityId,
    caip2: row.caip2,
    sender: row.sender,
    account: row.sender,
    sponsored: 'sponsor' in signer,
    ...('sponsor' in signer ? { sponsorId: signer.sponsor.id } : {}),
    ...(row.capsOrganizationId !== undefined ? { capsOrganizationId: row.capsOrganizationId } : {}),
    fills,
    nonce: row.nonce!,
    signedTransaction: signed,
    txHash: Transaction.fromHex(signed).hash,
    fees: {
      gasLimit: '21000',
      maxFeePerGas: fees.maxFeePerGas.toString(),
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
    },
  })
}

/**
 * The highest `maxFeePerGas` a user's fill may be signed at: what its reservation counted (21,000
 * gas at it); undefined for a sponsor's fill (the sponsorship ceilings bound it).
 */
const fillMostPerGas = (row: SendTransactionRow): bigint | undefined =>
  row.fills !== undefined && row.reservedFee !== undefined ? BigInt(row.reservedFee) / 21_000n : undefined

/**
 * The longest a user's fill the node keeps refusing waits before it is signed and broadcast again
 * (`refillAt`): an account holding nothing would otherwise cost the operator's node 3 calls every
 * 30 s for the fill's 3 hours (`SEND_EXPIRES_AFTER_MS`), some 360 looks, for free.
 */
export const FILL_REFUSED_RETRY_AT_MOST_MS = 30 * 60_000

/**
 * When a fill the node refused is broadcast again. A sponsor's: after a short backoff (at most
 * 30 s), whatever it cost: every user's later sponsored sends wait behind its nonce. A user's: the
 * same at first, then after half as long as it has gone refused since it was made or last
 * accepted (`broadcastAt`), at most `FILL_REFUSED_RETRY_AT_MOST_MS`, and no later than its expiry
 * (when it is given up): some 22 looks over its 3 hours rather than 360.
 */
function refillAt(ctx: SendContext, row: SendTransactionRow): number {
  const now = ctx.runtime.now()
  const backoff = Math.min(30_000, 250 * 2 ** Math.min(row.attempts + 1, 7))
  if (!expires(row)) return now + backoff
  const refusedFor = now - Math.max(row.createdAt, row.broadcastAt ?? 0)
  const wait = Math.min(FILL_REFUSED_RETRY_AT_MOST_MS, Math.max(backoff, Math.floor(refusedFor / 2)))
  return Math.min(now + wait, Math.max(now + backoff, row.createdAt + SEND_EXPIRES_AFTER_MS))
}

/**
 * A fill the node refused: signed again at the market's price (a user's, at most what its
 * reservation counted; a sponsor's, its raise counted first against the caps of the user whose
 * send it fills, as a replacement of it is, never refused) and broadcast again later (`refillAt`),
 * or at `notBefore` (its nonce stays empty until one is mined; the earlier versions stay tracked, one
 * only ever refused among `refusedHashes`).
 */
async function refill(
  ctx: SendContext,
  row: SendTransactionRow,
  notBefore = refillAt(ctx, row),
): Promise<void> {
  const { runtime } = ctx
  const signer = await fillSignerOf(runtime.store, row)
  const attempts = row.attempts + 1
  if (!signer) {
    await ctx.fail(
      row,
      row.sponsorId === undefined ? 'the account is gone' : 'the sponsor account is gone',
      undefined,
      { keepSpend: mayBeOnANode(row) },
    )
    return
  }
  const fees = await fillFees(ctx, { ...row, fees: undefined })
  const most = fillMostPerGas(row)
  if (most !== undefined && fees.maxFeePerGas > most) fees.maxFeePerGas = most
  if (fees.maxPriorityFeePerGas > fees.maxFeePerGas) fees.maxPriorityFeePerGas = fees.maxFeePerGas
  if ('sponsor' in signer) {
    const organization = await capsOrganizationOf(runtime.store, row)
    if (organization) await countReplacement(ctx, row, organization, fees.maxFeePerGas)
  }
  const fresh = signFill(runtime, row, fees, signer)
  // The version it replaces stays tracked whenever a node may hold it: one whose broadcast answer
  // was lost (a gateway's 504 after it forwarded it) may be mined, its fee paid, as well as one
  // that was broadcast. One signed again at the same fees is the same transaction.
  // One only ever refused is asked about too (`refusedHashes`): another instance past its lease may
  // have handed it to a node.
  const prior = row.priorHashes ?? []
  const dropped = fresh.txHash !== row.txHash && !prior.includes(row.txHash)
  const keep = dropped && versionMayBeOnANode(row)
  await ctx.update(row, {
    signedTransaction: fresh.signedTransaction,
    txHash: fresh.txHash,
    fees: fresh.fees,
    ...(keep ? { priorHashes: [...prior, row.txHash] } : dropped ? { refusedHashes: refusedWith(row) } : {}),
    attempts,
    signedAtAttempt: attempts,
    notBefore,
  })
}

/**
 * Counts what a sponsored replacement adds (gas limit × the raise of its max fee past what was
 * counted: its fee before, or `prepaidMaxFeePerGas`) against the wei caps of the user who sent it,
 * as a send is counted; false when a cap refuses it. A replacement within what was counted at
 * signing counts nothing and is never refused.
 */
async function countReplacement(
  ctx: SendContext,
  row: SendTransactionRow,
  organization: CapsOrganization,
  maxFeePerGas: bigint,
): Promise<boolean> {
  const { runtime } = ctx
  // A fill's replacement is counted as the fill was (`countSponsorFill`), never refused: the
  // nonce must be filled.
  const fill = row.fills !== undefined
  const activity = await runtime.store.get('activities', row.activityId)
  if (!activity || !row.fees) return true
  const gasLimit = BigInt(row.fees.gasLimit)
  // Counted so far: its gas at the fee it has, or at the most it was counted at when signed.
  const signedAt = BigInt(row.fees.maxFeePerGas)
  const prepaid = BigInt(row.prepaidMaxFeePerGas ?? '0')
  const raise = gasLimit * (maxFeePerGas - (prepaid > signedAt ? prepaid : signedAt))
  if (raise <= 0n) return true
  const perTransaction = capsOf(runtime, organization).perTransactionWei
  // The whole replacement: its gas at the raised fee, and its L1 data and operator fees (its
  // gas limit, so its operator fee, is its original's).
  if (
    !fill &&
    perTransaction !== undefined &&
    gasLimit * maxFeePerGas + BigInt(row.l1Fee ?? '0') + BigInt(row.operatorFee ?? '0') >
      BigInt(perTransaction)
  )
    return false
  try {
    await runtime.store.transaction((tx) =>
      checkGasCaps(
        workerCaps(runtime, tx, organization, activity.userId),
        // The per-transaction cap was judged above, on the whole replacement.
        {
          gas: raise,
          sendTransactionId: row.id,
          unit: 'wei',
          perTransaction: false,
          ...(fill ? { force: true as const } : {}),
        },
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
 * The highest `maxFeePerGas` the service may ever sign for a sponsored send of `organization` that
 * starts at `maxFeePerGas`: `mostMaxFeePerGas` under the lower of `sending.maxFeePerGasCeiling` and
 * the organization's sponsored-fee ceiling (what `replace` raises it under). Its wei caps count
 * its gas limit at this when it is signed (`prepaidMaxFeePerGas`): its replacements are paid for,
 * and no cap can leave it unreplaced at the sponsor's nonce, which every user's sends wait behind.
 */
export function sponsoredMostMaxFeePerGas(
  runtime: SendContext['runtime'],
  organization: CapsOrganization,
  maxFeePerGas: bigint,
): bigint {
  const { sending } = runtime.stateOf(SENDING)
  const sponsored = feeCeilingsOf(runtime, organization).maxFeePerGas
  const ceiling = BigInt(sending.maxFeePerGasCeiling)
  return mostMaxFeePerGas(maxFeePerGas, {
    ...sending,
    maxFeePerGasCeiling: String(sponsored < ceiling ? sponsored : ceiling),
  })
}

/**
 * The highest tip (`maxPriorityFeePerGas`) a sponsored send may start at under a tip ceiling of
 * `tipCeiling`: raised by `replacementBumpPercent` (rounded up) `maxReplacements` times, it stays
 * at or under the ceiling. A node takes a replacement only with its tip raised too, so a send
 * whose raised tip would pass the ceiling could not be replaced, and would hold the sponsor's
 * nonce while the base fee is above its price.
 */
export function mostStartingTip(
  tipCeiling: bigint,
  options: Pick<Required<SendingOptions>, 'maxReplacements' | 'replacementBumpPercent'>,
): bigint {
  // bumpFee(t) <= c exactly when t <= floor(100c / (100 + percent)).
  let tip = tipCeiling
  for (let replacement = 0; replacement < options.maxReplacements; replacement++)
    tip = (tip * 100n) / BigInt(100 + options.replacementBumpPercent)
  return tip
}

/**
 * The organization a sponsored send is judged by (its caps, its fee ceilings): its own, or once
 * its sub-organization is deleted, a stand-in under the top-level organization the send recorded
 * when signed (`capsOrganizationId`); undefined for a send signed before that was recorded whose
 * sub-organization is gone.
 */
async function capsOrganizationOf(
  reads: Reads,
  row: SendTransactionRow,
): Promise<CapsOrganization | undefined> {
  const organization = await reads.get('organizations', row.organizationId)
  if (organization) return organization
  if (row.capsOrganizationId === undefined) return undefined
  return row.capsOrganizationId === row.organizationId
    ? { id: row.organizationId }
    : { id: row.organizationId, parentOrganizationId: row.capsOrganizationId }
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
  let tipCeiling: bigint | undefined
  // No replacement is made: the send waits at the price it has, and is not tried again.
  const waitAsIs = async (): Promise<void> => {
    await ctx.update(row, {
      notBefore: runtime.now() + options.pollIntervalMs,
      replacements: options.maxReplacements,
    })
  }
  // A sponsored send whose sub-organization was deleted is judged under its parent's ceilings and
  // caps (its replacements were paid for when it was signed).
  const organization = row.sponsored ? await capsOrganizationOf(runtime.store, row) : undefined
  if (row.sponsored && !organization) {
    // Signed before its parent was recorded, its sub-organization deleted since: no fee ceiling or
    // cap is left to judge a raise by, and the sponsor would pay for it. It is not replaced; it
    // waits at the price it has.
    return waitAsIs()
  }
  if (organization) {
    const sponsored = feeCeilingsOf(runtime, organization)
    if (sponsored.maxFeePerGas < ceiling) ceiling = sponsored.maxFeePerGas
    tipCeiling = sponsored.maxPriorityFeePerGas
  }
  // A user's fill, signed again at the market's price since (`refill`), stays within what its
  // reservation counted.
  const most = fillMostPerGas(row)
  if (most !== undefined && most < ceiling) ceiling = most
  const bump = (value: bigint) => bumpFee(value, options.replacementBumpPercent)
  const maxFeePerGas = bump(raw.maxFeePerGas ?? 0n)
  if (maxFeePerGas > ceiling) {
    return waitAsIs()
  }
  const bumpedTip = bump(raw.maxPriorityFeePerGas ?? 0n)
  const maxPriorityFeePerGas = bumpedTip > maxFeePerGas ? maxFeePerGas : bumpedTip
  // The sponsor's tip ceiling holds for replacements too. A node takes a replacement only with its
  // tip raised as well, so one past the ceiling is not made: the send waits at the price it has.
  if (tipCeiling !== undefined && maxPriorityFeePerGas > tipCeiling) {
    return waitAsIs()
  }
  // A sponsored replacement past what was counted at signing (`prepaidMaxFeePerGas`; every raise,
  // for a send signed before it) counts the difference against the wei caps first, and one past a
  // cap is not made (the send waits).
  if (organization && !(await countReplacement(ctx, row, organization, maxFeePerGas))) {
    return waitAsIs()
  }
  const unsigned = unsignedFieldsOf(previous)
  const prepared = Transaction.prepare({
    ...unsigned,
    type: previous.type,
    maxFeePerGas,
    maxPriorityFeePerGas,
  } as never)
  let signed: string
  if (row.sponsorId) {
    const sponsor = await runtime.store.get('sponsors', row.sponsorId)
    if (!sponsor)
      return ctx.fail(row, 'the sponsor account is gone', undefined, { keepSpend: mayBeOnANode(row) })
    const key = runtime.open(sponsor.sealedPrivateKey)
    try {
      signed = prepared.signBy(key).toHex()
    } finally {
      key.fill(0)
    }
  } else {
    // Signed elsewhere (`eth_send_raw_transaction`, the only send recorded without the fees the
    // service signed): never signed again here, even where the service holds the key. What signed
    // it (a `sign_transaction` under a spending limit) counted its fee as signed, no more, and a
    // raise is its signer's to choose.
    if (!row.fees) return waitAsIs()
    const account = await findSigner(runtime.store, row.organizationId, row.sender, 'sender').catch(
      () => undefined,
    )
    if (!account) return waitAsIs()
    signed = withAccountKey(runtime, account, (key) => prepared.signBy(key).toHex())
  }
  const replacement = row.replacements + 1
  const txHash = Transaction.fromHex(signed).hash
  // Only while it is open: another instance may have seen a version of it mined meanwhile (it
  // tracks without a lease), and a mined send is never made PENDING again.
  const replaced = await ctx.update(
    row,
    {
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
    },
    { whileOpen: true },
  )
  if (replaced) runtime.emit('send.replaced', { chain: 'eip155', replacement })
}

/** A signed transaction's fields without its signature: what signing it again (or another signature) starts from. */
function unsignedFieldsOf(signed: { raw: unknown }): Record<string, unknown> {
  const { r: _r, s: _s, yParity: _y, ...unsigned } = signed.raw as Record<string, unknown>
  return unsigned
}
