// Whose nonce counter an `eth_send_raw_transaction` may move. An end user could hand the first,
// replaced version of their own sponsored send (sponsor-signed, public on the node) to
// eth_send_raw_transaction: it was recorded as their unsponsored send, the node refused it (a
// replacement at its nonce was in the pool), and the worker gave that nonce back to the sponsor's
// counter although the sponsor's send at it was still open; behind a node whose pending count lags
// (the service trusts its own counter then), the next user's sponsored send took the same nonce. The
// same worked on any other organization's account (its replaced versions are public too), and on
// the caller's own open send. Now a sponsor's transaction is refused, and a raw send moves a counter
// only for an account of the caller's own organization, at a nonce that counter had not passed.
import { addr, Transaction } from 'micro-eth-signer'
import { serializeTransaction } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SendTransactionRow } from '../../src/kernel/store/model.ts'
import { nonceIdOf } from '../../src/sending/sendingState.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import { type Harness, resultOf } from '../../src/testing/harness.ts'
import {
  type Chain,
  endUser,
  erc20Call,
  refusingNode,
  sponsoredService,
  startChain,
  waitForReplacements,
} from './sendSupport.ts'

let chain: Chain
const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dead'
const GWEI = 10n ** 9n

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.rpc('evm_setAutomine', [true]).catch(() => undefined)
  await chain?.node.close()
})

/**
 * A node behind a load balancer answering from a backend whose pool lacks the pending versions (or
 * a node restarted, which lost its pool): `pending` counts are the mined ones. The service trusts
 * its own counter over such a node (docs/sending.md).
 */
const laggingPool: typeof fetch = async (input, init) => {
  const body = JSON.parse(String(init?.body)) as { method: string; params: unknown[] }
  if (body.method === 'eth_getTransactionCount' && body.params[1] === 'pending') {
    body.params[1] = 'latest'
    return fetch(input, { ...init, body: JSON.stringify(body) })
  }
  return fetch(input, init)
}

/** Polls the send's row (the clock following real time, for the worker) until `done` or 10 s. */
async function waitForRow(h: Harness, id: string, done: (row: SendTransactionRow) => boolean) {
  const until = Date.now() + 10_000
  let row = (await h.service.store.get('sendTransactions', id))!
  while (!done(row) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    h.clock.set(Date.now())
    row = (await h.service.store.get('sendTransactions', id))!
  }
  return row
}

/** Whether the send is still open (a replacement is PENDING until the worker broadcasts it). */
const isOpen = async (h: Harness, id: string) =>
  ['PENDING', 'BROADCASTED'].includes((await h.service.store.get('sendTransactions', id))!.status)

const counterOf = async (h: Harness, address: string) =>
  (await h.service.store.get('nonces', nonceIdOf(CAIP2, address)))?.next

const sendRaw = (h: Harness, signedTransaction: string, as: unknown) => {
  h.clock.set(Date.now())
  return h.submit('eth_send_raw_transaction', { signedTransaction, caip2: CAIP2 }, as as never)
}

type User = Awaited<ReturnType<typeof endUser>>

/**
 * `owner` sends (sponsored or not) at nonce N while the node mines nothing, and the worker replaces
 * it once: the node's pool holds the replacement, and the first version is public. Answers the
 * send's id, its first version and N.
 */
async function replacedSend(h: Harness, owner: User, sponsor: boolean) {
  const sent = await owner.send({ sponsor, calls: [erc20Call('mint', DEAD, 1n)] })
  expect(sent.status, JSON.stringify(sent.body)).toBe(200)
  const id = resultOf('eth_send_transaction', sent).sendTransactionStatusId as string
  const first = await waitForRow(h, id, (row) => row.status === 'BROADCASTED')
  expect(first.status).toBe('BROADCASTED')
  expect((await waitForReplacements(h, id, 1)).replacements).toBeGreaterThanOrEqual(1)
  return { id, firstVersion: first.signedTransaction, n: BigInt(first.nonce!) }
}

describe("a raw send of someone else's signed transaction", () => {
  it("refuses a sponsor-signed transaction (a replaced version of the caller's sponsored send): 403 SPONSOR_TRANSACTION_REFUSED, and the next user's sponsored send takes the next nonce", async () => {
    const h = await sponsoredService(
      chain,
      { perUserPerDayWei: String(10n ** 17n) },
      { replaceAfterMs: 150 },
      { fetch: laggingPool },
    )
    const sponsor = sponsorAddress(h.service.runtime)!
    const attacker = await endUser(h)
    const victim = await endUser(h)
    await chain.rpc('evm_setAutomine', [false])
    try {
      const { id, firstVersion, n } = await replacedSend(h, attacker, true)
      const sends = (await h.service.store.all('sendTransactions')).length
      const raw = await sendRaw(h, firstVersion, attacker.as)
      expect(raw.status, JSON.stringify(raw.body)).toBe(403)
      expect(raw.body).toMatchObject({
        details: { errorCode: 'SPONSOR_TRANSACTION_REFUSED', field: 'parameters.signedTransaction' },
      })
      // Nothing recorded, the sponsor's send still open, its counter past N.
      expect((await h.service.store.all('sendTransactions')).length).toBe(sends)
      expect(await isOpen(h, id)).toBe(true)
      expect(await counterOf(h, sponsor)).toBe(String(n + 1n))
      const v = await victim.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 2n)] })
      expect(v.status, JSON.stringify(v.body)).toBe(200)
      const vId = resultOf('eth_send_transaction', v).sendTransactionStatusId as string
      expect((await h.service.store.get('sendTransactions', vId))!.nonce).toBe(String(n + 1n))
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await h.service.close()
    }
  }, 60_000)

  it('control: behind a node whose pool lags, the next sponsored send takes the next nonce (the counter is trusted)', async () => {
    const h = await sponsoredService(
      chain,
      { perUserPerDayWei: String(10n ** 17n) },
      { replaceAfterMs: 150 },
      { fetch: laggingPool },
    )
    const first = await endUser(h)
    const second = await endUser(h)
    await chain.rpc('evm_setAutomine', [false])
    try {
      const { n } = await replacedSend(h, first, true)
      const v = await second.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 2n)] })
      const vId = resultOf('eth_send_transaction', v).sendTransactionStatusId as string
      expect((await h.service.store.get('sendTransactions', vId))!.nonce).toBe(String(n + 1n))
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await h.service.close()
    }
  }, 60_000)

  it.each([
    ["another organization's account", true],
    ["the caller's own account (its send still open)", false],
  ])(
    'relays an earlier version of a send of %s; its refusal gives no nonce back and signs no fill',
    async (_, other) => {
      const h = await sponsoredService(chain, {}, { replaceAfterMs: 150 }, { fetch: laggingPool })
      const owner = await endUser(h)
      const relayer = other ? await endUser(h) : owner
      await chain.fund(owner.from, 10n ** 18n)
      await chain.rpc('evm_setAutomine', [false])
      try {
        const { id, firstVersion, n } = await replacedSend(h, owner, false)
        expect(await counterOf(h, owner.from)).toBe(String(n + 1n))
        // Relayed: anyone may hand a signed transaction to the node.
        const raw = await sendRaw(h, firstVersion, relayer.as)
        expect(raw.status, JSON.stringify(raw.body)).toBe(200)
        const rawRow = (await h.service.store.all('sendTransactions')).find(
          (row) => row.organizationId === relayer.organizationId && row.id !== id && row.fills === undefined,
        )!
        expect(rawRow.sender.toLowerCase()).toBe(owner.from.toLowerCase())
        expect(rawRow.countedNonce).toBeUndefined()
        // The node refuses it (the replacement at N is in its pool): FAILED.
        expect((await waitForRow(h, rawRow.id, (row) => row.status === 'FAILED')).status).toBe('FAILED')
        // The owner's send at N is still open, its counter still past N, and no fill was signed at N.
        expect(await isOpen(h, id)).toBe(true)
        expect(await counterOf(h, owner.from)).toBe(String(n + 1n))
        expect(await h.service.store.get('sendTransactions', `${rawRow.id}.fill`)).toBeUndefined()
        // Behind the lagging node, the owner's next send takes N + 1, not the nonce its open send holds.
        const next = await owner.send({ calls: [erc20Call('mint', DEAD, 3n)] })
        expect(next.status, JSON.stringify(next.body)).toBe(200)
        const nextId = resultOf('eth_send_transaction', next).sendTransactionStatusId as string
        expect((await h.service.store.get('sendTransactions', nextId))!.nonce).toBe(String(n + 1n))
      } finally {
        await chain.rpc('evm_setAutomine', [true])
        await h.service.close()
      }
    },
    60_000,
  )

  it('keeps no counter for an address outside the service', async () => {
    const h = await sponsoredService(chain)
    const user = await endUser(h)
    const key = addr.random()
    await chain.fund(key.address, 10n ** 16n)
    const signed = Transaction.prepare({
      to: DEAD,
      value: 1n,
      nonce: 0n,
      chainId: 31337n,
      maxFeePerGas: 20n * GWEI,
      maxPriorityFeePerGas: GWEI,
    })
      .signBy(key.privateKey)
      .toHex()
    resultOf('eth_send_raw_transaction', await sendRaw(h, signed, user.as))
    expect(await h.service.store.get('nonces', nonceIdOf(CAIP2, key.address))).toBeUndefined()
    await h.service.close()
  }, 60_000)
})

describe("a raw send of the caller's own signed transaction (sign_transaction, then eth_send_raw_transaction)", () => {
  it('takes its nonce on the account counter, and gives it back when the node refuses it', async () => {
    let refuse = ''
    const h = await sponsoredService(
      chain,
      {},
      {},
      {
        fetch: refusingNode((raw) => raw.toLowerCase() === refuse, {
          message: 'insufficient funds for gas * price + value',
        }),
      },
    )
    const user = await endUser(h)
    await chain.fund(user.from, 10n ** 18n)
    const n = BigInt((await chain.rpc('eth_getTransactionCount', [user.from, 'pending'])) as string)
    const unsigned = serializeTransaction({
      type: 'eip1559',
      chainId: 31337,
      nonce: Number(n),
      to: DEAD,
      value: 1n,
      gas: 21_000n,
      maxFeePerGas: 20n * GWEI,
      maxPriorityFeePerGas: GWEI,
    })
    h.clock.set(Date.now())
    const { signedTransaction } = resultOf(
      'sign_transaction',
      await h.submit(
        'sign_transaction',
        { signWith: user.from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned },
        user.as,
      ),
    ) as { signedTransaction: string }
    refuse = `0x${signedTransaction.replace(/^0x/, '')}`.toLowerCase()
    resultOf('eth_send_raw_transaction', await sendRaw(h, signedTransaction, user.as))
    const [row] = await h.service.store.findBy('sendTransactions', 'organizationId', user.organizationId)
    expect(row!.countedNonce).toBe(true)
    // Later sends the service signs for the account take nonces after it.
    expect(await counterOf(h, user.from)).toBe(String(n + 1n))
    // Refused before the node took it: its nonce goes back.
    expect((await waitForRow(h, row!.id, (r) => r.status === 'FAILED')).status).toBe('FAILED')
    expect(await counterOf(h, user.from)).toBe(String(n))
    await h.service.close()
  }, 60_000)
})
