import type { SendTransactionStatus } from '@latchkey/protocol'
import type { Runtime } from '../kernel/Runtime.ts'
import type { SendTransactionRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Transaction.ts'
import type { SendingOptions } from './SendingOptions.ts'
import type { SendRpc } from './sendRpc.ts'

/**
 * What the send worker hands a sender for one send: the node of its chain, the options, and the
 * worker's own writes (each in a transaction of its own, never while a node call is under way).
 */
export interface SendContext {
  runtime: Runtime
  /** The JSON-RPC node configured for the send's CAIP-2 chain (`rpc`), with the call timeout. */
  rpc: SendRpc
  options: Required<SendingOptions>
  /**
   * Writes `changes` to the send (a claim's lease ends with it); with `whileOpen`, only while it is
   * still PENDING or BROADCASTED (another instance may have settled it). With `paidFee` (a mined
   * send's fee, in the chain's native unit), the spending limits that reserved its fee at its most
   * keep what it paid instead, in the same transaction (`settleSpend`); `also` writes more in it,
   * given the row as it was. With `whileVersion`, only while the send's current version is that hash
   * (another instance may have recorded one of its own meanwhile). A row a claim returned is
   * written only while the send's `notBefore` is still that claim's: an instance past its lease
   * writes nothing over the instance that took the send over (`whileClaimed`, set by the worker).
   * Resolves with whether it wrote.
   */
  update(
    row: SendTransactionRow,
    changes: Partial<SendTransactionRow>,
    options?: {
      whileOpen?: boolean
      whileVersion?: string
      paidFee?: bigint
      also?: (tx: Transaction, current: SendTransactionRow) => Promise<void>
    },
  ): Promise<boolean>
  /**
   * `call`'s answer shared by every send of the same chain one worker pass looks at under `key`
   * (EVM: a sender's mined count): the first send to ask calls it, the others share its answer (or
   * its error). A pass is short and the answer only moves forward (a count): a send that reads it a
   * little stale decides at its next look. @default every send calls
   */
  sharedInPass?<T>(key: string, call: () => Promise<T>): Promise<T>
  /** Takes the send for a lease unless another pass (here or on another instance) took it first. */
  claim(row: SendTransactionRow): Promise<SendTransactionRow | undefined>
  /**
   * Records that the node took the send (`send.broadcast`, then BROADCASTED with one more attempt,
   * looked at again after the poll interval): what every sender writes after a broadcast, only
   * while the claim holds. Resolves with whether it wrote.
   */
  broadcasted(row: SendTransactionRow): Promise<boolean>
  /**
   * Marks the send FAILED with `message` (what `get_send_transaction_status` answers) and reports it;
   * `also` writes more in the same transaction (under the organization's spend lock), given the
   * row as it was; a string it resolves with is the error message instead of `message`. A send
   * never broadcast gives back what it reserved under spending limits, unless `keepSpend` or the
   * send as it is now may be on a node (decided on the current row, not on `row`): its signed
   * transaction may still reach the chain another way. Written only while the claim holds.
   */
  fail(
    row: SendTransactionRow,
    message: string,
    also?: (tx: Transaction, current: SendTransactionRow) => Promise<string | undefined>,
    options?: { keepSpend?: boolean },
  ): Promise<void>
  /** Reports that the send reached its final status (`send.final`), once its write is done. */
  final(row: SendTransactionRow, status: 'INCLUDED' | 'FAILED'): void
}

/**
 * How the service sends on one chain family, named by its CAIP-2 namespace: the send worker picks
 * the sender of a send's namespace to broadcast it and follow it to a final status, the activities
 * check the namespace has one before anything is signed, and `get_send_transaction_status` asks it
 * for the chain's part of the answer. The sending wing has one for `eip155` and one for `solana`;
 * `sendingWing({ senders })` adds others. A node unreachable mid-call is an `RpcUnreachableError`
 * (the worker retries the send with backoff); anything else a sender throws leaves the send for the
 * next pass.
 */
export interface ChainSender {
  /** The CAIP-2 namespace (`eip155`, `solana`): lower-case letters, digits and `-`, 3 to 8 characters. */
  readonly namespace: string
  /**
   * Following a broadcast send writes nothing until it settles (EVM: reading receipts), so the
   * worker looks without taking a lease first; the sender claims the send itself before anything
   * else it writes (a replacement). @default false: every step runs under the worker's lease.
   */
  readonly tracksWithoutLease?: boolean
  /**
   * A PENDING send never attempted, claimed again after an earlier claim's lease ran out with
   * nothing recorded (its process died mid-broadcast, or the write after the node's answer
   * failed), counts that claim as an attempt whose answer was lost (`attempts`): the node may have
   * taken it, and may have mined it. For a sender whose PENDING sends wait only on a claim before
   * their first attempt (a `notBefore` past 0 then is a lease). @default false
   */
  readonly countsLostClaims?: boolean
  /** Broadcasts a PENDING send (committed with its activity), then writes BROADCASTED, or fails it. */
  broadcast(ctx: SendContext, row: SendTransactionRow): Promise<void>
  /** Follows a BROADCASTED send: writes its final status once the chain has one. */
  track(ctx: SendContext, row: SendTransactionRow): Promise<void>
  /** The chain's part of `get_send_transaction_status` (`eth`, `solana`). @default none */
  status?(row: SendTransactionRow): Pick<SendTransactionStatus, 'eth' | 'solana'>
}

/** A CAIP-2 namespace (CAIP-2: `[-a-z0-9]{3,8}`). */
export const NAMESPACE = /^[-a-z0-9]{3,8}$/

/** The CAIP-2 namespace of a chain id (`eip155` of `eip155:1`). */
export const namespaceOf = (caip2: string): string => caip2.slice(0, Math.max(0, caip2.indexOf(':')))
