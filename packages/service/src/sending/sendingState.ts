import { FieldError, NotConfiguredError } from '../kernel/base/errors.ts'
import type { Caller } from '../kernel/Caller.ts'
import { PluginStateKey, type Runtime } from '../kernel/Runtime.ts'
import type { NonceRow, SendTransactionRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Transaction.ts'
import { type ChainSender, namespaceOf } from './ChainSender.ts'
import type { SendingOptions, SponsorshipOptions } from './SendingOptions.ts'
import { type SendRpc, sendRpc } from './sendRpc.ts'

/** What the sending wing keeps for the process's life (`runtime.stateOf(SENDING)`). */
export interface SendingState {
  /** JSON-RPC endpoints by CAIP-2 chain id. */
  rpc: Readonly<Record<string, string>>
  /** How sends are broadcast and tracked, defaults filled in. */
  sending: Required<SendingOptions>
  /** Gas sponsorship; absent: `sponsor: true` is refused. */
  sponsorship?: SponsorshipOptions
  /** The sender of each chain family, by CAIP-2 namespace. */
  senders: ReadonlyMap<string, ChainSender>
}

import { OPEN_STATUSES } from '../kernel/store/model.ts'

export { OPEN_STATUSES, type OpenStatus } from '../kernel/store/model.ts'

/** Every open send, read from the store or inside a transaction. */
export async function openSends(reader: Pick<Transaction, 'findBy'>): Promise<SendTransactionRow[]> {
  const rows = await Promise.all(
    OPEN_STATUSES.map((status) => reader.findBy('sendTransactions', 'status', status)),
  )
  return rows.flat()
}

/** The `openHash` of a send of `txHash`, or the `openAccount` of one from `account`, on `caip2` (`DERIVED`). */
export const onChain = (caip2: string, value: string): string => `${caip2} ${value.toLowerCase()}`

/** A signed send as its caller gives it: what `pendingSend` makes a PENDING row of. */
export type NewSend = Omit<
  SendTransactionRow,
  'status' | 'attempts' | 'notBefore' | 'replacements' | 'createdAt' | 'updatedAt'
>

/** `send` as a PENDING row of `now`: its broadcast job, not yet tried. */
export const pendingSend = (now: number, send: NewSend): SendTransactionRow => ({
  ...send,
  status: 'PENDING',
  attempts: 0,
  notBefore: 0,
  replacements: 0,
  createdAt: now,
  updatedAt: now,
})

/**
 * What a send records of the credential that submitted it (`SendTransactionRow.submittedWith`): the
 * facts the spending limits judged it by, so a fill of its nonce is counted under the same limits
 * once the credential is gone.
 */
export const submittedWithOf = ({
  credential,
}: Pick<Caller, 'credential'>): NonNullable<SendTransactionRow['submittedWith']> => ({
  kind: credential.kind,
  id: credential.id,
  ...(credential.sessionProfileId !== undefined ? { sessionProfileId: credential.sessionProfileId } : {}),
})

/** The `nonces` row of an account's outer nonces on a chain (`takeNonce`). */
export const nonceIdOf = (caip2: string, address: string): string => `${caip2}|${address.toLowerCase()}`

/**
 * In a transaction: gives nonce `nonce` of `address` back to its counter when it is the last one
 * taken (the counter's next is `nonce + 1`), so the next send takes it again; false when a later
 * one was taken since (the hole stays: `evmSender`'s fill closes it, with the sponsor's key or the
 * account's own). Only for a nonce no transaction the node took uses: the next send still takes
 * the node's pending count if higher.
 */
export async function giveBackNonce(
  tx: Pick<Transaction, 'get' | 'put'>,
  nonce: { now: number; caip2: string; address: string; nonce: bigint },
): Promise<boolean> {
  const id = nonceIdOf(nonce.caip2, nonce.address)
  const row = await tx.get('nonces', id)
  if (!row || BigInt(row.next) !== nonce.nonce + 1n) return false
  await tx.put('nonces', { ...row, next: nonce.nonce.toString(), updatedAt: nonce.now })
  return true
}

/** Orders nonces lowest first. */
const ascending = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0)

/** The node's count `node`, raised to what the counter knows was used (`NonceRow.least`). */
export function nonceFloor(row: NonceRow | undefined, node: bigint): bigint {
  const least = row?.least === undefined ? 0n : BigInt(row.least)
  return node > least ? node : least
}

/**
 * The counter's holes the node has not passed (at or above `floor`: one below was used) and the
 * counter has, lowest first: the next nonces `takeNonce` gives before the counter's next.
 */
export function openHoles(row: NonceRow | undefined, floor: bigint): bigint[] {
  if (!row) return []
  return (row.holes ?? [])
    .map(BigInt)
    .filter((hole) => hole >= floor && hole < BigInt(row.next))
    .sort(ascending)
}

/**
 * How far past its sender's next nonce a send may name its own (a raw transaction's, signed
 * elsewhere; `eth_send_transaction`'s `nonce`): the next is the node's pending count or the
 * service's counter of the account, whichever is higher (the account's sends committed and not yet
 * broadcast count). Past it the node would only queue the transaction, unmined until the nonces
 * before it are used: a send that costs node calls and ends expired.
 */
export const MAX_NONCE_GAP = 16n

/**
 * Refuses a send naming `nonce` more than `MAX_NONCE_GAP` past the next nonce of `address` on
 * `caip2` (the higher of `counter`'s next, the service's counter read in the activity's
 * transaction, and `pending`, the node's pending count read before it): a 400 naming `field`.
 */
export function checkNonceGap(check: {
  counter: NonceRow | undefined
  pending: bigint
  nonce: bigint
  caip2: string
  address: string
  field: string
  code?: 'TRANSACTION_INVALID'
}): void {
  const { counter, pending, nonce } = check
  const next = counter && BigInt(counter.next) > pending ? BigInt(counter.next) : pending
  if (nonce <= next + MAX_NONCE_GAP) return
  throw new FieldError({
    ...(check.code ? { code: check.code } : {}),
    field: check.field,
    message: `nonce ${nonce} is more than ${MAX_NONCE_GAP} past ${check.address}'s next nonce ${next} on ${check.caip2}: the node would hold it unmined until the nonces before it are used; send those first`,
  })
}

/**
 * The most open sends (committed, not yet final: PENDING or BROADCASTED) one organization holds: an
 * end user's sub-organization, or an organization of its own (the operator's, whose back end may
 * send for many users at once). Each open send costs the operator's node calls on every worker
 * pass until it is final; a send past the cap is refused until some of its sends are final (an
 * unmined unsponsored one ends `SEND_EXPIRES_AFTER_MS` after its commit, `evmSender`). The
 * worker's fills of a user's account are made only within it (`evmSender`'s `failUnmined`).
 */
export const MAX_OPEN_SENDS = { subOrganization: 64, organization: 1024 } as const

/**
 * Most holes a counter keeps. A hole past it is not recorded (`recordNonceHole` says so) rather than
 * one already recorded dropped: whatever gave up that nonce counts on its being the counter's to give.
 */
export const MAX_HOLES = 16

/**
 * In a transaction: records `nonce` of `address` as a hole of its counter, a nonce it gave that no
 * transaction will use and nothing fills (`NonceRow.holes`), so that the account's next send takes
 * it (`takeNonce`). True when the nonce is the counter's to give after it: recorded, already a hole,
 * or not passed by the counter (given back, or never taken). False, and nothing written, when the
 * counter already keeps `MAX_HOLES` holes: nothing else is dropped for it, and the caller keeps the
 * nonce some other way (a user's expired fill stays open, `evmSender`) or leaves it empty.
 */
export async function recordNonceHole(
  tx: Pick<Transaction, 'get' | 'put'>,
  hole: { now: number; caip2: string; address: string; nonce: bigint },
): Promise<boolean> {
  const id = nonceIdOf(hole.caip2, hole.address)
  const row = await tx.get('nonces', id)
  if (!row || BigInt(row.next) <= hole.nonce) return true
  const recorded = row.holes ?? []
  if (recorded.includes(hole.nonce.toString())) return true
  if (recorded.length >= MAX_HOLES) return false
  const holes = [...recorded, hole.nonce.toString()].map(BigInt).sort(ascending)
  await tx.put('nonces', { ...row, holes: holes.map(String), updatedAt: hole.now })
  return true
}

/** The counter of an account's batch nonces of the Latchkey delegate on `caip2` (`takeNonce`). */
export const delegateCounterOf = (caip2: string): string => `${caip2}#delegate`

/**
 * In a transaction: the counter of `address` on `caip2` never starts again below `least`
 * (`NonceRow.least`), a nonce the service saw used: a batch that ran with `least - 1`.
 */
export async function raiseNonceFloor(
  tx: Pick<Transaction, 'get' | 'put'>,
  floor: { now: number; caip2: string; address: string; least: bigint },
): Promise<void> {
  const id = nonceIdOf(floor.caip2, floor.address)
  const row = await tx.get('nonces', id)
  if (row?.least !== undefined && BigInt(row.least) >= floor.least) return
  const next = row && BigInt(row.next) > floor.least ? row.next : floor.least.toString()
  await tx.put('nonces', {
    ...(row ?? { id, createdAt: floor.now }),
    next,
    least: floor.least.toString(),
    updatedAt: floor.now,
  })
}

/**
 * In a transaction: `nonce` of `address` is no hole any more (a send names it itself). True when it
 * was one: the send took it from the counter's holes.
 */
export async function forgetNonceHole(
  tx: Pick<Transaction, 'get' | 'put'>,
  hole: { now: number; caip2: string; address: string; nonce: bigint },
): Promise<boolean> {
  const id = nonceIdOf(hole.caip2, hole.address)
  const row = await tx.get('nonces', id)
  if (!row?.holes?.includes(hole.nonce.toString())) return false
  const { holes, ...rest } = row
  const left = holes.filter((entry) => entry !== hole.nonce.toString())
  await tx.put('nonces', { ...rest, ...(left.length > 0 ? { holes: left } : {}), updatedAt: hole.now })
  return true
}

/** The sending wing's state: its options and senders, read by its handlers and its worker. */
export const SENDING = new PluginStateKey<SendingState>('sending')

/**
 * The JSON-RPC node of `caip2`, with the configured call timeout. Refuses (400 naming `field`) a
 * chain of a family the service has no sender for, and (412 `RPC_NOT_CONFIGURED`) one without a node.
 */
export function rpcFor(runtime: Runtime, caip2: string, field = 'parameters.caip2'): SendRpc {
  const { rpc, sending, senders } = runtime.stateOf(SENDING)
  const namespace = namespaceOf(caip2)
  if (!senders.has(namespace))
    throw new FieldError({
      field,
      reason: `${caip2} is not on a chain family the service sends on (${[...senders.keys()].join(', ')})`,
    })
  const url = rpc[caip2]
  if (!url)
    throw new NotConfiguredError({
      code: 'RPC_NOT_CONFIGURED',
      field,
      message: `no JSON-RPC node is configured for ${caip2}`,
    })
  return sendRpc(url, runtime.options.fetch, sending.rpcTimeoutMs)
}

/** The sender of a send's chain family (its CAIP-2 namespace); undefined for a family the service does not send on. */
export const senderOf = (runtime: Runtime, row: { caip2: string }): ChainSender | undefined =>
  runtime.stateOf(SENDING).senders.get(namespaceOf(row.caip2))

/**
 * Whether this instance broadcasts sends: `[sending] worker` and some node configured (the wing's
 * `start` runs the worker then).
 */
export function runsSendWorker(runtime: Runtime): boolean {
  const { sending, rpc } = runtime.stateOf(SENDING)
  return sending.worker && Object.keys(rpc).length > 0
}
