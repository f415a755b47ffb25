// A user's own account: an unsponsored send the node refuses after the account's next send took
// the next nonce must not leave its nonce empty, or that send, and every later one through the
// service, waits in the node's queue behind the hole for good. The account fills it (a 0-value
// transfer to itself, its fee the account's), counted under its native spending limits first.
import { Transaction } from 'micro-eth-signer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { authorizationFillIdOf, fillIdOf, mostMaxFeePerGas } from '../../src/sending/evmSender.ts'
import { SENDING } from '../../src/sending/sendingState.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  limitedSubOrganization,
  resultOf,
} from '../../src/testing/harness.ts'
import {
  type Chain,
  endUser,
  refusingNode,
  sponsoredService,
  startChain,
  waitForSend,
} from './sendSupport.ts'

let chain: Chain
const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dead'
const GWEI = 10n ** 9n
const PRICE = { gasLimit: '21000', maxFeePerGas: String(2n * GWEI), maxPriorityFeePerGas: String(GWEI) }

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

const transferredBy = (raw: string) => (Transaction.fromHex(raw).raw as { value: bigint }).value

/** Waits (the service's clock following real time) until `id`'s send has `status`. */
/**
 * The refused send `id` as another instance may still have read it (PENDING, due): two more workers
 * at once broadcast it, the node refuses it again, and failUnmined runs again on both.
 */
async function refusedAgainOnTwoWorkers(h: Harness, id: string) {
  const stale = (await h.service.store.get('sendTransactions', id))!
  await h.service.store.transaction((tx) =>
    tx.put('sendTransactions', { ...stale, status: 'PENDING', notBefore: 0, error: undefined }),
  )
  h.clock.set(Date.now())
  const others = [startSendWorker(h.service.runtime), startSendWorker(h.service.runtime)]
  await Promise.all(others.map((worker) => worker.pass()))
  await waitForStatus(h, id, 'FAILED')
  await Promise.all(others.map((worker) => worker.stop()))
}

async function waitForStatus(h: Harness, id: string, status: string, ms = 10_000) {
  const until = Date.now() + ms
  for (;;) {
    h.clock.set(Date.now())
    const row = await h.service.store.get('sendTransactions', id)
    if (row?.status === status) return row
    if (Date.now() > until) throw new Error(`send ${id} still ${row?.status}`)
    await new Promise((resolve) => setTimeout(resolve, 30))
  }
}

/**
 * A service whose node refuses the account's transfer of 7 wei (once `release` is called), a
 * sub-organization with one funded account under a native limit of `amount` (none without one),
 * and two sends: 7 wei (refused), then 8 wei, signed at the next nonce while the first is still on
 * its way.
 */
async function refusedThenNext(amount?: bigint) {
  let release = () => {}
  const hold = new Promise<void>((resolve) => {
    release = resolve
  })
  const h = await createHarness({
    clock: fakeClock(Date.now()),
    rpc: { [CAIP2]: chain.url },
    sending: { pollIntervalMs: 20, replaceAfterMs: 200 },
    fetch: refusingNode((raw) => transferredBy(raw) === 7n, {
      hold,
      message: 'insufficient funds for gas * price + value',
    }),
  })
  const limited =
    amount === undefined
      ? await unlimitedSubOrganization(h)
      : await limitedSubOrganization(h, { amount: String(amount), caip2: CAIP2 })
  await chain.fund(limited.from, 10n ** 18n)
  const send = async (value: bigint) => {
    h.clock.set(Date.now())
    const reply = await h.submit(
      'eth_send_transaction',
      { from: limited.from, caip2: CAIP2, calls: [{ to: DEAD, value: String(value) }], ...PRICE },
      limited,
    )
    return resultOf('eth_send_transaction', reply).sendTransactionStatusId as string
  }
  const first = await send(7n)
  const next = await send(8n)
  release()
  const used = async () =>
    BigInt(
      (await h.query('latchkey_list_spending_limits', {}, limited)).body.spendingLimits.find(
        (limit: { spendingLimitId: string }) => limit.spendingLimitId === limited.spendingLimitId,
      ).used,
    )
  return { h, limited, first, next, used }
}

/** A sub-organization with one Ethereum account and no spending limit. */
async function unlimitedSubOrganization(h: Harness) {
  const sub = await h.createSubOrganization({ wallet: { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] } })
  return {
    as: sub.keys[0]!,
    organizationId: sub.organizationId,
    from: sub.addresses![0]!,
    spendingLimitId: '',
  }
}

describe("an unsponsored send the node refuses leaves no hole in the account's nonces", () => {
  it('refused after the next send was signed, no limit: the account fills its nonce from its own balance and the next send is included', async () => {
    const { h, limited, first, next } = await refusedThenNext()
    const failed = await waitForStatus(h, first, 'FAILED')
    expect(failed.error?.message).toBe(
      'the node refused the transaction: insufficient funds for gas * price + value',
    )
    const as = { organizationId: limited.organizationId, as: limited }
    // Without a fill it stays BROADCASTED: the node holds it behind the empty nonce for good.
    expect((await waitForSend(h, next, as)).txStatus).toBe('INCLUDED')
    const fill = await waitForStatus(h, fillIdOf(first), 'INCLUDED')
    expect(fill).toMatchObject({ nonce: failed.nonce, fills: first, sender: limited.from, sponsored: false })
    expect(Transaction.fromHex(fill.signedTransaction).raw).toMatchObject({
      to: limited.from,
      value: 0n,
      gasLimit: 21_000n,
      nonce: BigInt(failed.nonce!),
    })
    expect(BigInt((await chain.rpc('eth_getTransactionCount', [limited.from, 'latest'])) as string)).toBe(
      BigInt(failed.nonce!) + 2n,
    )
    await h.service.close()
  }, 60_000)

  it('refused after the next send was signed: the account fills its nonce, the next send is included, and the limit counts what the fill paid', async () => {
    const { h, limited, first, next, used } = await refusedThenNext(10n ** 17n)
    const failed = await waitForStatus(h, first, 'FAILED')
    expect(failed.error?.message).toContain('insufficient funds')
    const as = { organizationId: limited.organizationId, as: limited }
    expect((await waitForSend(h, next, as)).txStatus).toBe('INCLUDED')
    const fill = await waitForStatus(h, fillIdOf(first), 'INCLUDED')
    expect(fill).toMatchObject({ nonce: failed.nonce, fills: first, sender: limited.from, sponsored: false })
    expect(fill.sponsorId).toBeUndefined()
    const mined = (await chain.rpc('eth_getTransactionByHash', [fill.txHash])) as {
      from: string
      to: string
      value: string
    }
    expect([mined.from, mined.to, BigInt(mined.value)]).toEqual([
      limited.from.toLowerCase(),
      limited.from.toLowerCase(),
      0n,
    ])
    // One fill, however many passes of the worker saw the refusal.
    const rows = await h.service.store.all('sendTransactions')
    expect(rows.filter((row) => row.fills !== undefined)).toHaveLength(1)
    // The refused send gave its reservation back; the next send and the fill count what they paid.
    const paid = (row: (typeof rows)[number]) =>
      BigInt(row.receipt!.gasUsed) * BigInt(row.receipt!.effectiveGasPrice)
    const nextRow = (await h.service.store.get('sendTransactions', next))!
    const fillRow = (await h.service.store.get('sendTransactions', fillIdOf(first)))!
    expect(await used()).toBe(8n + paid(nextRow) + paid(fillRow))
    await h.service.close()
  }, 60_000)

  it('with no room for the fill under the limit, no fill is made and the limit holds', async () => {
    // Room for the two sends' reservations (21,000 gas at the most a replacement may offer) and
    // nothing more: the defaults' ceiling and bumps, read from a service.
    const probe = await createHarness()
    const each = 21_000n * mostMaxFeePerGas(2n * GWEI, probe.service.runtime.stateOf(SENDING).sending)
    await probe.service.close()
    const { h, limited, first, next, used } = await refusedThenNext(7n + 8n + 2n * each)
    const failed = await waitForStatus(h, first, 'FAILED')
    // The FAILED send says why its nonce is left empty: the limit's refusal of the fill's fee.
    expect(failed.error?.message).toMatch(
      new RegExp(
        `^the node refused the transaction: insufficient funds for gas \\* price \\+ value; nonce ${failed.nonce} of 0x[0-9a-fA-F]{40} was not filled, .*: spending limit .* this signature spends \\d+ \\(of which up to \\d+ is the network's fee\\)`,
      ),
    )
    // The fill would be priced above the refused send (its reservation given back): it does not fit.
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(await h.service.store.get('sendTransactions', fillIdOf(first))).toBeUndefined()
    expect(await used()).toBe(8n + each)
    expect((await h.service.store.get('sendTransactions', next))!.status).not.toBe('INCLUDED')
    // Once the limit has room, the account's next send takes the empty nonce, and the one waiting
    // behind it is mined too (without it, the new send takes the nonce after the last and waits).
    resultOf(
      'latchkey_update_spending_limit',
      await h.submit(
        'latchkey_update_spending_limit',
        { spendingLimitId: limited.spendingLimitId, amount: '1000000000000000000' },
        limited,
      ),
    )
    h.clock.set(Date.now())
    const third = resultOf(
      'eth_send_transaction',
      await h.submit(
        'eth_send_transaction',
        { from: limited.from, caip2: CAIP2, calls: [{ to: DEAD, value: '9' }], ...PRICE },
        limited,
      ),
    ).sendTransactionStatusId as string
    expect((await h.service.store.get('sendTransactions', third))!.nonce).toBe(failed.nonce)
    const as = { organizationId: limited.organizationId, as: limited }
    for (const id of [third, next]) expect((await waitForSend(h, id, as)).txStatus).toBe('INCLUDED')
    await h.service.close()
  }, 60_000)

  it('a worker pass that sees the refusal again, and two more workers at once, make no second fill and count none twice', async () => {
    const { h, limited, first, next, used } = await refusedThenNext(10n ** 17n)
    await waitForStatus(h, first, 'FAILED')
    const fill = (await h.service.store.get('sendTransactions', fillIdOf(first)))!
    const counted = await used()
    await refusedAgainOnTwoWorkers(h, first)
    const fills = (await h.service.store.all('sendTransactions')).filter((row) => row.fills === first)
    expect(fills).toHaveLength(1)
    expect(fills[0]!.id).toBe(fillIdOf(first))
    // Not signed again: the fill recorded first is the one (its hash, or a version of it, tracked).
    expect([fills[0]!.txHash, ...(fills[0]!.priorHashes ?? [])]).toContain(fill.txHash)
    const as = { organizationId: limited.organizationId, as: limited }
    expect((await waitForSend(h, next, as)).txStatus).toBe('INCLUDED')
    await waitForStatus(h, fillIdOf(first), 'INCLUDED')
    // The fee counted once: the next send and the one fill, what they paid.
    const paid = async (id: string) => {
      const row = (await h.service.store.get('sendTransactions', id))!
      return BigInt(row.receipt!.gasUsed) * BigInt(row.receipt!.effectiveGasPrice)
    }
    expect(counted).toBeGreaterThan(0n)
    expect(await used()).toBe(8n + (await paid(next)) + (await paid(fillIdOf(first))))
    await h.service.close()
  }, 60_000)

  it("an unsponsored batch that was to delegate the account, refused after the next send was signed (and the refusal seen again by two workers at once): both nonces it took, its own and its authorization's, are filled once, each counted once, and the next send is included", async () => {
    let release = () => {}
    const hold = new Promise<void>((resolve) => {
      release = resolve
    })
    // The node refuses the account's type-4 transaction (the batch with its authorization).
    const h = await sponsoredService(
      chain,
      {},
      { replaceAfterMs: 200 },
      {
        fetch: refusingNode((raw) => raw.startsWith('0x04'), {
          hold,
          message: 'insufficient funds for gas * price + value',
        }),
      },
    )
    const user = await endUser(h)
    await chain.fund(user.from, 10n ** 18n)
    const spendingLimitId = resultOf(
      'latchkey_create_spending_limit',
      await h.submit(
        'latchkey_create_spending_limit',
        {
          spendingLimitName: 'daily',
          scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: user.from },
          window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
          asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: CAIP2 },
          amount: String(10n ** 17n),
        },
        user.as,
      ),
    ).spendingLimitId as string
    const start = BigInt((await chain.rpc('eth_getTransactionCount', [user.from, 'latest'])) as string)
    const batch = resultOf(
      'eth_send_transaction',
      await user.send({
        calls: [
          { to: DEAD, value: '1' },
          { to: DEAD, value: '2' },
        ],
        ...PRICE,
        gasLimit: '300000',
      }),
    ).sendTransactionStatusId as string
    const next = resultOf(
      'eth_send_transaction',
      await user.send({ calls: [{ to: DEAD, value: '8' }], ...PRICE }),
    ).sendTransactionStatusId as string
    expect((await h.service.store.get('sendTransactions', next))!.nonce).toBe(String(start + 2n))
    release()
    await waitForStatus(h, batch, 'FAILED')
    // The refusal seen again by two workers at once: still one fill of each nonce, and none counted
    // twice (below).
    await refusedAgainOnTwoWorkers(h, batch)
    const fills = (await h.service.store.all('sendTransactions')).filter((row) => row.fills === batch)
    expect(fills.map((row) => row.id).sort()).toEqual([authorizationFillIdOf(batch), fillIdOf(batch)].sort())
    // Without the second fill the next send waits behind its authorization's nonce for good.
    expect((await waitForSend(h, next, { organizationId: user.organizationId, as: user.as })).txStatus).toBe(
      'INCLUDED',
    )
    const own = await waitForStatus(h, fillIdOf(batch), 'INCLUDED')
    const authorization = await waitForStatus(h, authorizationFillIdOf(batch), 'INCLUDED')
    expect([own.nonce, authorization.nonce]).toEqual([String(start), String(start + 1n)])
    for (const fill of [own, authorization])
      expect(Transaction.fromHex(fill.signedTransaction).raw).toMatchObject({ to: user.from, value: 0n })
    // Each counted under the account's limit, once: the next send and both fills, what they paid.
    const paid = async (id: string) => {
      const row = (await h.service.store.get('sendTransactions', id))!
      return BigInt(row.receipt!.gasUsed) * BigInt(row.receipt!.effectiveGasPrice)
    }
    const listed = await h.query('latchkey_list_spending_limits', {}, user.as)
    expect(
      listed.body.spendingLimits.find(
        (limit: { spendingLimitId: string }) => limit.spendingLimitId === spendingLimitId,
      ).used,
    ).toBe(
      String(
        8n + (await paid(next)) + (await paid(fillIdOf(batch))) + (await paid(authorizationFillIdOf(batch))),
      ),
    )
    await h.service.close()
  }, 60_000)
})
