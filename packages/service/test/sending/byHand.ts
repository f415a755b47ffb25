// What the tests of an account's fills and nonces share: one anvil for the file, a service whose
// send worker the test runs by hand (a pass at a time, the service's clock moved between them), a
// node whose answers the test holds or refuses, and an end user's transfers and raw sends.
import { Transaction } from 'micro-eth-signer'
import { serializeTransaction } from 'viem'
import { afterAll, beforeAll } from 'vitest'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import {
  createHarness,
  fakeClock,
  type Harness,
  limitedSubOrganization,
  resultOf,
  type SubmitOptions,
} from '../../src/testing/harness.ts'
import { type Chain, endUser, startChain } from './sendSupport.ts'

export const CAIP2 = 'eip155:31337'
export const DEAD = '0x000000000000000000000000000000000000dEaD'
export const GWEI = 10n ** 9n
/** A plain transfer's gas and price, named so the service asks the node for neither. */
export const PRICE = {
  gasLimit: '21000',
  maxFeePerGas: String(2n * GWEI),
  maxPriorityFeePerGas: String(GWEI),
}

/**
 * anvil (`startChain`) for the tests of the file that calls it: the object returned is filled in
 * before its tests run and the node closed after them.
 */
export function chainForFile(): Chain {
  const chain = {} as Chain
  beforeAll(async () => {
    Object.assign(chain, await startChain())
  }, 60_000)
  afterAll(async () => {
    await chain.node?.close()
  })
  return chain
}

/**
 * A service on `chain` whose send worker does not run by itself (`startSendWorker(…, { loop: false })`
 * runs its passes), its clock frozen at now, its node calls made through `fetchFn`.
 */
export function byHandService(
  chain: Chain,
  fetchFn: typeof fetch,
  { pollIntervalMs = 250, ...more }: { pollIntervalMs?: number } & Partial<CreateServiceOptions> = {},
): Promise<Harness> {
  return createHarness({
    ...more,
    clock: fakeClock(Date.now()),
    rpc: { [CAIP2]: chain.url },
    sending: { worker: false, pollIntervalMs },
    fetch: fetchFn,
  })
}

/** `count` of `worker`'s passes, the service's clock moved `stepMs` before each. */
export async function passes(
  h: Pick<Harness, 'clock'>,
  worker: { pass(): Promise<void> },
  count: number,
  stepMs: number,
): Promise<void> {
  for (let i = 0; i < count; i++) {
    h.clock.advance(stepMs)
    await worker.pass()
  }
}

/** The send `id`'s row once its status is `status`; throws after `withinMs` of real time. */
export async function waitForStatus(h: Harness, id: string, status: string, withinMs = 10_000) {
  const until = Date.now() + withinMs
  for (;;) {
    const row = await h.service.store.get('sendTransactions', id)
    if (row?.status === status) return row
    if (Date.now() > until) throw new Error(`send ${id} still ${row?.status}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * A pass of `worker` during which the broadcasts the node holds wait until each send of `ids` has
 * FAILED (refused, and filled): then `release` lets them through and the pass ends.
 */
export async function passHolding(
  h: Harness,
  worker: { pass(): Promise<void> },
  ids: string[],
  release: () => void,
  withinMs?: number,
): Promise<void> {
  const pass = worker.pass()
  for (const id of ids) await waitForStatus(h, id, 'FAILED', withinMs)
  release()
  await pass
}

/** The wei a signed transaction `raw` transfers. */
export const transferred = (raw: string) => (Transaction.fromHex(raw).raw as { value: bigint }).value

/** The node's JSON-RPC reply to call `id`, `result` or `error` as given. */
const nodeReply = (body: Record<string, unknown>) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', ...body }), {
    headers: { 'content-type': 'application/json' },
  })

/** The node's JSON-RPC answer to call `id` refusing it with `message`. */
export const nodeRefusal = (id: number | undefined, message: string) =>
  nodeReply({ id, error: { code: -32000, message } })

/** The node's JSON-RPC answer to call `id` with `result`. */
export const nodeAnswer = (id: number | undefined, result: unknown) => nodeReply({ id, result })

/**
 * A node whose receipts lag its count while `lagging()` (a load-balanced provider whose receipt
 * index is behind): every `eth_getTransactionReceipt` answers null then; every other call, and
 * every call otherwise, goes to `next`.
 */
export function receiptsLagging(lagging: () => boolean, next: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { id?: number; method: string }
    if (lagging() && body.method === 'eth_getTransactionReceipt') return nodeAnswer(body.id, null)
    return next(input, init)
  }
}

/**
 * A node that refuses one broadcast with `message`: the raw transaction `refuse` names, the next
 * time it is sent (then forgotten); every other call goes to `next`.
 */
export function refusingOnce(message: string, next: typeof fetch = fetch) {
  let raw: string | undefined
  const fetchFn: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { id?: number; method: string; params: string[] }
    if (body.method === 'eth_sendRawTransaction' && raw !== undefined && body.params[0] === raw) {
      raw = undefined
      return nodeRefusal(body.id, message)
    }
    return next(input, init)
  }
  const refuse = (signed: string | undefined) => {
    raw = signed
  }
  return { fetch: fetchFn, refuse }
}

/** A transfer of 1 wei to DEAD at `nonce` on the chain, signed with `key` at the fees given. */
export const signedTransfer = (key: Uint8Array | string, nonce: bigint, maxFeePerGas: bigint, tip: bigint) =>
  Transaction.prepare({
    to: DEAD,
    value: 1n,
    nonce,
    chainId: 31337n,
    gasLimit: 21_000n,
    maxFeePerGas,
    maxPriorityFeePerGas: tip,
  })
    .signBy(key as never)
    .toHex()

/**
 * A `fetch` that counts the service's JSON-RPC calls by method, holds the broadcast of every
 * transaction `held` picks until `release` is called, and refuses that of every one `refused`
 * picks as a node refuses a transaction its sender cannot pay for.
 */
export function countingFetch(
  held: (raw: string) => boolean = () => false,
  refused: (raw: string) => boolean = () => false,
) {
  const calls = new Map<string, number>()
  let release = () => {}
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const fetchFn: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { id?: number; method: string; params: string[] }
    calls.set(body.method, (calls.get(body.method) ?? 0) + 1)
    if (body.method === 'eth_sendRawTransaction' && held(body.params[0]!)) await gate
    if (body.method === 'eth_sendRawTransaction' && refused(body.params[0]!))
      return nodeRefusal(body.id, 'insufficient funds for gas * price + value')
    return fetch(input, init)
  }
  return { fetch: fetchFn, calls, release, reset: () => calls.clear() }
}

/**
 * A by-hand service whose node refuses the transfer of 1 wei at nonce 5 (as it does one its sender
 * cannot pay for), its calls counted, and an end user whose account holds 0.01 ETH.
 */
export async function refusedAtNonceFive(chain: Chain) {
  const counting = countingFetch(
    undefined,
    (raw) => Transaction.fromHex(raw).raw.nonce === 5n && transferred(raw) === 1n,
  )
  const h = await byHandService(chain, counting.fetch)
  const user = await endUser(h)
  await chain.fund(user.from, 10n ** 16n)
  return { counting, h, user }
}

/**
 * A function that submits a transfer of `value` wei to DEAD from `from` as `as` (at PRICE) and
 * answers its sendTransactionStatusId; with `followTime`, the service's clock is first moved to
 * real time, and at least a millisecond on.
 */
export function transfers(
  h: Harness,
  from: string,
  as: SubmitOptions,
  { followTime = false }: { followTime?: boolean } = {},
) {
  return async (value: bigint | number): Promise<string> => {
    if (followTime) h.clock.set(Math.max(h.clock.now() + 1, Date.now()))
    return resultOf(
      'eth_send_transaction',
      await h.submit(
        'eth_send_transaction',
        { from, caip2: CAIP2, calls: [{ to: DEAD, value: String(value) }], ...PRICE },
        as,
      ),
    ).sendTransactionStatusId as string
  }
}

/**
 * `user` signs a transfer of `value` wei to DEAD at `nonce` (sign_transaction) and sends it
 * (eth_send_raw_transaction); with `followTime`, the service's clock is set to real time before each.
 */
export async function sendRaw(
  h: Harness,
  user: Pick<Awaited<ReturnType<typeof endUser>>, 'from' | 'as'>,
  nonce: number,
  value: bigint,
  { followTime = false }: { followTime?: boolean } = {},
): Promise<void> {
  const unsigned = serializeTransaction({
    type: 'eip1559',
    chainId: 31337,
    nonce,
    to: DEAD,
    value,
    gas: 21_000n,
    maxFeePerGas: 2n * GWEI,
    maxPriorityFeePerGas: GWEI,
  })
  if (followTime) h.clock.set(Date.now())
  const { signedTransaction } = resultOf(
    'sign_transaction',
    await h.submit(
      'sign_transaction',
      { signWith: user.from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned },
      user.as,
    ),
  ) as { signedTransaction: string }
  if (followTime) h.clock.set(Date.now())
  resultOf(
    'eth_send_raw_transaction',
    await h.submit('eth_send_raw_transaction', { signedTransaction, caip2: CAIP2 }, user.as),
  )
}

/**
 * An end user's transfer of 5 wei to DEAD (at PRICE) under a daily native limit of 0.01 ETH on the
 * chain, its account funded with 1 ETH (mined, automine or not), the service's clock at real time:
 * the send's id, its row as it is now, and what the limit counts used now.
 */
export async function transferUnderLimit(h: Harness, chain: Chain) {
  const user = await limitedSubOrganization(h, { amount: String(10n ** 16n), caip2: CAIP2 })
  await chain.fund(user.from, 10n ** 18n)
  await chain.rpc('evm_mine', [])
  const id = await transfers(h, user.from, user, { followTime: true })(5)
  return {
    id,
    row: async () => (await h.service.store.get('sendTransactions', id))!,
    used: async () =>
      BigInt(
        (await h.query('latchkey_list_spending_limits', {}, user)).body.spendingLimits.find(
          (limit: { spendingLimitId: string }) => limit.spendingLimitId === user.spendingLimitId,
        ).used,
      ),
  }
}

/**
 * A `fetch` whose next `eth_sendRawTransaction` runs `during` (once armed, `hold.next`): `before`
 * the node gets it (the request on its way, or its process paused), or `after` it took it (the
 * answer on its way back).
 */
export function holdingBroadcasts(next: typeof fetch = fetch) {
  const hold: { next?: { when: 'before' | 'after'; during: () => Promise<void> } } = {}
  const fetchFn: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { method: string }
    const held = body.method === 'eth_sendRawTransaction' ? hold.next : undefined
    if (!held) return next(input, init)
    hold.next = undefined
    if (held.when === 'before') {
      await held.during()
      return next(input, init)
    }
    const answer = await next(input, init)
    await held.during()
    return answer
  }
  return { fetch: fetchFn, hold }
}

/** anvil mines one block whose base fee is `baseFee`. */
export async function mineAtBaseFee(chain: Chain, baseFee: bigint) {
  await chain.rpc('anvil_setNextBlockBaseFeePerGas', [`0x${baseFee.toString(16)}`])
  await chain.rpc('evm_mine', [])
}

/** What `receipt` cost in fees, wei. */
export const paidFor = (receipt: { gasUsed: string; effectiveGasPrice: string }) =>
  BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice)
