// The sponsor's nonce is shared by every end user: a sponsored send the node refuses must not leave
// its nonce empty, or every later sponsored send (of any user) waits in the node's queue behind the
// hole for good, replaced and charged to its sender's caps. The node here refuses as geth refuses a
// 7702 transaction whose authority has transactions pending ("authority already reserved"), a
// refusal no check before signing can foresee.
import { Transaction } from 'micro-eth-signer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillIdOf } from '../../src/sending/evmSender.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import { ETHEREUM_ACCOUNT, type Harness, resultOf } from '../../src/testing/harness.ts'
import {
  type Chain,
  endUser,
  erc20Call,
  refusingNode,
  sponsoredService,
  startChain,
  waitForSend,
} from './sendSupport.ts'

let chain: Chain
const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dead'

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

const count = async (address: string, block: 'latest' | 'pending') =>
  BigInt((await chain.rpc('eth_getTransactionCount', [address, block])) as string)

/** The outer transaction's `to`: a sponsored batch is sent to the end user's account. */
const toOf = (raw: string) => String((Transaction.fromHex(raw).raw as { to?: string }).to).toLowerCase()

/** Waits (the service's clock following real time) until `id`'s send is FAILED. */
async function waitForFailed(h: Harness, id: string) {
  const until = Date.now() + 10_000
  for (;;) {
    h.clock.set(Date.now())
    const row = await h.service.store.get('sendTransactions', id)
    if (row?.status === 'FAILED') return row
    if (Date.now() > until) throw new Error(`send ${id} still ${row?.status}`)
    await new Promise((resolve) => setTimeout(resolve, 30))
  }
}

describe("a sponsored send the node refuses leaves no hole in the sponsor's nonces", () => {
  it('refused while a later sponsored send of another user was already signed: a fill takes its nonce, and the later send is included', async () => {
    let attacker = ''
    let release = () => {}
    const hold = new Promise<void>((resolve) => {
      release = resolve
    })
    const h = await sponsoredService(
      chain,
      { perUserPerDayWei: String(10n ** 16n) },
      { replaceAfterMs: 200 },
      { fetch: refusingNode((raw) => toOf(raw) === attacker, { hold }) },
    )
    const sponsor = sponsorAddress(h.service.runtime)!
    const first = await count(sponsor, 'latest')
    const bad = await endUser(h)
    const victim = await endUser(h)
    attacker = bad.from.toLowerCase()
    const badId = resultOf(
      'eth_send_transaction',
      await bad.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 1n)] }),
    ).sendTransactionStatusId as string
    // Signed at the next nonce while the refused one is still on its way to the node.
    const goodId = resultOf(
      'eth_send_transaction',
      await victim.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 2n)] }),
    ).sendTransactionStatusId as string
    release()
    expect(await waitForFailed(h, badId)).toMatchObject({
      nonce: String(first),
      error: { message: 'the node refused the transaction: authority already reserved' },
    })
    const status = await waitForSend(h, goodId, { organizationId: victim.organizationId, as: victim.as })
    expect(status.txStatus).toBe('INCLUDED')
    expect(await h.service.store.get('sendTransactions', goodId)).toMatchObject({
      nonce: String(first + 1n),
      replacements: 0,
    })
    // The fill: a 0-value transfer from the sponsor to itself at the refused send's nonce, mined
    // (before the later send; its status follows at the next look).
    await waitForSend(h, fillIdOf(badId), { organizationId: bad.organizationId, as: bad.as })
    const fill = (await h.service.store.get('sendTransactions', fillIdOf(badId)))!
    expect(fill).toMatchObject({ status: 'INCLUDED', nonce: String(first), fills: badId, sender: sponsor })
    const mined = (await chain.rpc('eth_getTransactionByHash', [fill.txHash])) as {
      from: string
      to: string
      value: string
    }
    expect({
      from: mined.from.toLowerCase(),
      to: mined.to.toLowerCase(),
      value: BigInt(mined.value),
    }).toEqual({
      from: sponsor.toLowerCase(),
      to: sponsor.toLowerCase(),
      value: 0n,
    })
    expect(await count(sponsor, 'latest')).toBe(first + 2n)
    // The caps of the user whose send was refused count its fill (sponsoredFills.test.ts).
    const usage = await h.service.store.all('gasUsage')
    expect(new Set(usage.map((row) => row.sendTransactionId))).toEqual(
      new Set([badId, goodId, fillIdOf(badId)]),
    )
    expect(
      (await h.service.store.all('sendTransactions')).filter((row) => row.fills !== undefined),
    ).toHaveLength(1)
    await h.service.close()
  }, 60_000)

  it("refused after its sub-organization was deleted: its fill still counts, under the parent organization's monthly caps", async () => {
    let attacker = ''
    let release = () => {}
    const hold = new Promise<void>((resolve) => {
      release = resolve
    })
    const h = await sponsoredService(
      chain,
      { perOrganizationPerMonthWei: String(10n ** 17n) },
      { replaceAfterMs: 200 },
      { fetch: refusingNode((raw) => toOf(raw) === attacker, { hold }) },
    )
    const bad = await endUser(h)
    const victim = await endUser(h)
    attacker = bad.from.toLowerCase()
    const badId = resultOf(
      'eth_send_transaction',
      await bad.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 1n)] }),
    ).sendTransactionStatusId as string
    const goodId = resultOf(
      'eth_send_transaction',
      await victim.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 2n)] }),
    ).sendTransactionStatusId as string
    resultOf(
      'delete_sub_organization',
      await h.submit('delete_sub_organization', { deleteWithoutExport: true }, bad.as),
    )
    release()
    await waitForFailed(h, badId)
    await waitForSend(h, goodId, { organizationId: victim.organizationId, as: victim.as })
    const fill = await h.service.store.get('sendTransactions', fillIdOf(badId))
    expect(fill).toMatchObject({ fills: badId })
    const usage = await h.service.store.all('gasUsage')
    const month = usage.find(
      (row) => row.sendTransactionId === goodId && row.userDay.endsWith('|wei'),
    )!.organizationMonth
    const fillWei = usage.filter((row) => row.sendTransactionId === fill!.id && row.userDay.endsWith('|wei'))
    expect(fillWei.map((row) => [row.organizationMonth, row.gas])).toEqual([
      [month, String(21_000n * BigInt(fill!.fees!.maxFeePerGas))],
    ])
    await h.service.close()
  }, 60_000)

  it('refused with nothing signed after it: its nonce (and its authorization nonce) goes back, and the next sponsored send takes it', async () => {
    let attacker = ''
    const h = await sponsoredService(
      chain,
      {},
      { replaceAfterMs: 200 },
      {
        fetch: refusingNode((raw) => toOf(raw) === attacker),
      },
    )
    const sponsor = sponsorAddress(h.service.runtime)!
    const first = await count(sponsor, 'latest')
    const user = await endUser(h)
    attacker = user.from.toLowerCase()
    const badId = resultOf(
      'eth_send_transaction',
      await user.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 1n)] }),
    ).sendTransactionStatusId as string
    expect(await waitForFailed(h, badId)).toMatchObject({ nonce: String(first) })
    expect(await h.service.store.get('sendTransactions', fillIdOf(badId))).toBeUndefined()
    // The same user again, the node taking it now: the sponsor's nonce and the user's
    // authorization nonce are the refused send's, so the delegation is put in place and the batch runs.
    attacker = ''
    const before = await chain.tokenBalance(DEAD)
    const id = resultOf(
      'eth_send_transaction',
      await user.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 2n)] }),
    ).sendTransactionStatusId as string
    expect((await waitForSend(h, id, { organizationId: user.organizationId, as: user.as })).txStatus).toBe(
      'INCLUDED',
    )
    expect(await h.service.store.get('sendTransactions', id)).toMatchObject({ nonce: String(first) })
    expect(await chain.tokenBalance(DEAD)).toBe(before + 2n)
    expect(await count(sponsor, 'latest')).toBe(first + 1n)
    await h.service.close()
  }, 60_000)

  it("an unsponsored send the node refused gives the account's own nonce back", async () => {
    // The node refuses the transfer of 1 wei (as it would from an account without the fee).
    const h = await sponsoredService(
      chain,
      {},
      {},
      {
        fetch: refusingNode((raw) => (Transaction.fromHex(raw).raw as { value: bigint }).value === 1n, {
          message: 'insufficient funds for gas * price + value',
        }),
      },
    )
    const { addresses } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'payer', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const from = addresses[0] as string
    await chain.fund(from, 10n ** 18n)
    const send = async (value: string) => {
      h.clock.set(Date.now())
      const reply = await h.submit('eth_send_transaction', {
        from,
        caip2: CAIP2,
        calls: [{ to: DEAD, value }],
      })
      return resultOf('eth_send_transaction', reply).sendTransactionStatusId as string
    }
    const badId = await send('1')
    expect(await waitForFailed(h, badId)).toMatchObject({ nonce: '0' })
    const id = await send('2')
    expect((await waitForSend(h, id)).txStatus).toBe('INCLUDED')
    expect(await h.service.store.get('sendTransactions', id)).toMatchObject({ nonce: '0' })
    await h.service.close()
  }, 60_000)
})
