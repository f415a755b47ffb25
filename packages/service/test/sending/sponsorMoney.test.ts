// The sponsor's money (issue 36): what a caller with an ordinary account can make the sponsor pay.
// Every refusal here happens before anything is signed, so the sponsor's balance and nonce stay.
import { Transaction } from 'micro-eth-signer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { GasCaps, SendingOptions } from '../../src/sending/SendingOptions.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import { ETHEREUM_ACCOUNT, type Json, resultOf } from '../../src/testing/harness.ts'
import {
  type Chain,
  endUser,
  erc20Call,
  sendCount,
  sponsoredService,
  startChain,
  waitForReplacements,
  waitForSend,
} from './sendSupport.ts'

let chain: Chain
const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dead'
const GWEI = 10n ** 9n

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

const service = (caps: GasCaps = {}, sending: SendingOptions = {}) => sponsoredService(chain, caps, sending)
/** A sponsored send's parameters: a mint of `i` at `gasLimit` and `maxFeePerGas`, tipping 1 gwei. */
const sponsoredMint = (i: bigint, gasLimit: bigint, maxFeePerGas: bigint) => ({
  sponsor: true,
  gasLimit: String(gasLimit),
  maxFeePerGas: String(maxFeePerGas),
  maxPriorityFeePerGas: String(GWEI),
  calls: [erc20Call('mint', DEAD, i)],
})
const pendingNonce = async (address: string) =>
  BigInt((await chain.rpc('eth_getTransactionCount', [address, 'pending'])) as string)

describe("the sponsor's money", () => {
  it('a caller-chosen 9,000 gwei fee, a caller-chosen sponsor nonce and a reverting batch are refused before signing; the sponsor pays nothing', async () => {
    const h = await service()
    const sponsor = sponsorAddress(h.service.runtime)!
    const user = await endUser(h)
    const [balance, nonce] = [await chain.balance(sponsor), await pendingNonce(sponsor)]
    const mint = erc20Call('mint', DEAD, 1n)
    const refusals: [Json, number, string, string][] = [
      // The price: over the operator's ceiling (default 500 gwei), and over what the signer encodes.
      [{ maxFeePerGas: String(9_000n * GWEI) }, 400, 'FIELD_INVALID', 'parameters.maxFeePerGas'],
      [
        { maxFeePerGas: String(400n * GWEI), maxPriorityFeePerGas: String(450n * GWEI) },
        400,
        'FIELD_INVALID',
        'parameters.maxPriorityFeePerGas',
      ],
      [{ maxFeePerGas: String(100_000n * GWEI) }, 400, 'FIELD_INVALID', 'parameters.maxFeePerGas'],
      // The sponsor's nonce and the account's batch nonce are the service's.
      [{ nonce: String(nonce + 3n) }, 400, 'FIELD_INVALID', 'parameters.nonce'],
      [{ gasStationNonce: '0' }, 400, 'FIELD_INVALID', 'parameters.gasStationNonce'],
    ]
    for (const [extra, status, errorCode, field] of refusals) {
      const reply = await user.send({ sponsor: true, calls: [mint], ...extra })
      expect(
        { status: reply.status, errorCode: reply.body.details?.errorCode, field: reply.body.details?.field },
        JSON.stringify(extra),
      ).toEqual({ status, errorCode, field })
    }
    // A batch whose call reverts: the token transfer of tokens the account does not have.
    const reverting = await user.send({ sponsor: true, calls: [mint, erc20Call('transfer', DEAD, 5n)] })
    expect(reverting.status).toBe(412)
    expect(reverting.body.details).toMatchObject({
      errorCode: 'TRANSACTION_REVERTED',
      field: 'parameters.calls',
      revertChain: [
        {
          errorType: 'custom',
          displayMessage: `ERC20InsufficientBalance(${user.from.toLowerCase()}, 0, 5)`,
          custom: { errorName: 'ERC20InsufficientBalance' },
        },
      ],
    })
    expect(reverting.body.message).toContain('ERC20InsufficientBalance')
    // A value transfer from an account with no ETH.
    const broke = await user.send({ sponsor: true, calls: [{ to: DEAD, value: '1000' }] })
    expect(broke.status).toBe(412)
    expect(broke.body.details).toMatchObject({
      errorCode: 'TRANSACTION_REVERTED',
      revertChain: [{ errorType: 'custom', custom: { errorName: 'FailedCall' } }],
    })
    expect(await sendCount(h)).toBe(0)
    expect(await chain.balance(sponsor)).toBe(balance)
    expect(await pendingNonce(sponsor)).toBe(nonce)
    expect(await h.service.store.all('gasUsage')).toEqual([])
    // An ordinary sponsored send still goes through, at a price under the ceiling.
    const id = resultOf('eth_send_transaction', await user.send({ sponsor: true, calls: [mint] }))
      .sendTransactionStatusId as string
    const status = await waitForSend(h, id, { organizationId: user.organizationId, as: user.as })
    expect(status.txStatus).toBe('INCLUDED')
    const row = (await h.service.store.get('sendTransactions', id))!
    expect(BigInt(row.fees!.maxFeePerGas)).toBeLessThanOrEqual(500n * GWEI)
    await h.service.close()
  })

  it("lowers the node's suggested fees to the operator's ceilings, and refuses while the base fee is above them", async () => {
    const block = (await chain.rpc('eth_getBlockByNumber', ['latest', false])) as { baseFeePerGas: string }
    const baseFee = BigInt(block.baseFeePerGas)
    // Under the node's suggestion (twice the base fee plus its tip), over the base fee.
    const ceiling = baseFee + baseFee / 2n + 1n
    const h = await service({ maxFeePerGas: String(ceiling), maxPriorityFeePerGas: '7' })
    const user = await endUser(h)
    const id = resultOf(
      'eth_send_transaction',
      await user.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 1n)] }),
    ).sendTransactionStatusId as string
    const row = (await h.service.store.get('sendTransactions', id))!
    const raw = Transaction.fromHex(row.signedTransaction).raw as {
      maxFeePerGas: bigint
      maxPriorityFeePerGas: bigint
    }
    expect(raw.maxFeePerGas).toBe(ceiling)
    // The tip its three replacements (+25% each) can raise without passing the 7 wei ceiling.
    expect(raw.maxPriorityFeePerGas).toBe(3n)
    expect((await waitForSend(h, id, { organizationId: user.organizationId, as: user.as })).txStatus).toBe(
      'INCLUDED',
    )
    // A caller's fee over the ceiling is refused, naming the field.
    const over = await user.send({
      sponsor: true,
      calls: [erc20Call('mint', DEAD, 2n)],
      maxFeePerGas: String(ceiling + 1n),
    })
    expect(over).toMatchObject({ status: 400, body: { details: { field: 'parameters.maxFeePerGas' } } })
    await h.service.close()
    // A ceiling under the base fee: the send could not be included, so it is not signed.
    const low = await service({ maxFeePerGas: '1' })
    const other = await endUser(low)
    const refused = await other.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 1n)] })
    expect(refused).toMatchObject({
      status: 429,
      body: { details: { errorCode: 'GAS_CAP_EXCEEDED', cap: 'max fee per gas' } },
    })
    expect(await sendCount(low)).toBe(0)
    await low.service.close()
  })

  it('caps count wei (gas limit × the most max fee per gas its replacements may offer): per transaction, and per user per day under a 6-way race', async () => {
    const gasLimit = 200_000n
    const maxFeePerGas = 3n * GWEI
    // 3 gwei raised 25% three times.
    const perSend = gasLimit * 5_859_375_000n
    const h = await service({
      perTransactionWei: String(perSend),
      perUserPerDayWei: String(2n * perSend + perSend / 2n),
    })
    const user = await endUser(h)
    const priced = (i: number, fee = maxFeePerGas) => sponsoredMint(BigInt(i + 1), gasLimit, fee)
    // Within every gas cap (there is none), over the per-transaction wei cap by its price alone.
    const dear = await user.send(priced(100, maxFeePerGas + 1n))
    expect(dear).toMatchObject({
      status: 429,
      body: { details: { errorCode: 'GAS_CAP_EXCEEDED', cap: 'per-transaction wei' } },
    })
    h.clock.set(Date.now())
    // Unmined meanwhile: a mined send's caps keep only what it cost.
    await chain.rpc('evm_setAutomine', [false])
    try {
      const replies = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          h.submit('eth_send_transaction', { from: user.from, caip2: CAIP2, ...priced(i) } as never, user.as),
        ),
      )
      expect(replies.filter((reply) => reply.status >= 500)).toEqual([])
      const accepted = replies.filter((reply) => reply.status === 200)
      expect(accepted).toHaveLength(2)
      for (const reply of replies.filter((r) => r.status !== 200))
        expect(reply.body.details).toMatchObject({ errorCode: 'GAS_CAP_EXCEEDED', cap: 'per-user daily wei' })
      expect(await sendCount(h)).toBe(2)
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await chain.rpc('evm_mine', [])
    }
    await h.service.close()
  })

  it('once a sponsored send is mined, the caps keep what it cost (gas used at the price paid), not the most it could have: the next send fits', async () => {
    const gasLimit = 200_000n
    const fee = 2n * GWEI
    // 2 gwei raised 25% three times: what one send is counted at when signed.
    const most = 3_906_250_000n
    // Room for one send counted at its most and what one costs at most at its own fee; for one
    // send's gas limit and a little less than another's.
    const h = await service({
      perUserPerDayWei: String(gasLimit * most + gasLimit * fee),
      perUserPerDay: Number(2n * gasLimit - 1n),
    })
    const user = await endUser(h)
    const send = (i: bigint) => user.send(sponsoredMint(i, gasLimit, fee))
    const used = async (unit: 'gas' | 'wei') =>
      (await h.service.store.all('gasUsage'))
        .filter((r) => (unit === 'wei') === r.userDay.endsWith('|wei'))
        .reduce((total, r) => total + BigInt(r.gas), 0n)
    const first = resultOf('eth_send_transaction', await send(1n)).sendTransactionStatusId as string
    // Counted at the most while it is open.
    expect([await used('gas'), await used('wei')]).toEqual([gasLimit, gasLimit * most])
    expect(await waitForSend(h, first, { organizationId: user.organizationId, as: user.as })).toMatchObject({
      txStatus: 'INCLUDED',
    })
    const { receipt } = (await h.service.store.get('sendTransactions', first))!
    const gasUsed = BigInt(receipt!.gasUsed)
    const paid = gasUsed * BigInt(receipt!.effectiveGasPrice)
    expect([await used('gas'), await used('wei')]).toEqual([gasUsed, paid])
    // Counted at its most, the first would leave no room for the second.
    const second = await send(2n)
    expect(second.status, JSON.stringify(second.body)).toBe(200)
    await h.service.close()
  })

  it("a stuck sponsored send's replacements are counted when it is signed: each is made and counts nothing more; a send signed before that rule still counts each raise, and one past a cap is not made", async () => {
    const gasLimit = 200_000n
    const fee = 2n * GWEI
    // 2 gwei raised 25% three times.
    const most = 3_906_250_000n
    const raise = gasLimit * ((fee * 125n) / 100n - fee)
    const h = await service({ perUserPerDayWei: String(gasLimit * most) }, { replaceAfterMs: 300 })
    const user = await endUser(h)
    const send = (i: bigint) => user.send(sponsoredMint(i, gasLimit, fee))
    const wei = async () =>
      (await h.service.store.all('gasUsage'))
        .filter((r) => r.userDay.endsWith('|wei'))
        .map((r) => BigInt(r.gas))
        .sort()
    await chain.rpc('evm_setAutomine', [false])
    try {
      const id = resultOf('eth_send_transaction', await send(1n)).sendTransactionStatusId as string
      expect(await h.service.store.get('sendTransactions', id)).toMatchObject({
        prepaidMaxFeePerGas: String(most),
      })
      const row = await waitForReplacements(h, id, 3)
      expect(row.replacements).toBe(3)
      expect(row.priorHashes).toHaveLength(3)
      expect(BigInt(row.fees!.maxFeePerGas)).toBe(most)
      expect(await wei()).toEqual([gasLimit * most])
      // The cap is used: the next is refused before signing.
      expect(await send(2n)).toMatchObject({
        status: 429,
        body: { details: { errorCode: 'GAS_CAP_EXCEEDED', cap: 'per-user daily wei' } },
      })
    } finally {
      await chain.rpc('evm_setAutomine', [true])
    }
    await chain.rpc('evm_mine', [])
    await h.service.close()
    // A send as signed before the rule: its row without `prepaidMaxFeePerGas`, its caps counted at
    // its fee; the day's other sends leave room for one replacement (+25%), not a second.
    const old = await service({ perUserPerDayWei: String(gasLimit * most) }, { replaceAfterMs: 300 })
    const other = await endUser(old)
    await chain.rpc('evm_setAutomine', [false])
    try {
      const reply = await other.send(sponsoredMint(1n, gasLimit, fee))
      const id = resultOf('eth_send_transaction', reply).sendTransactionStatusId as string
      const usage = (await old.service.store.all('gasUsage')).find(
        (r) => r.sendTransactionId === id && r.userDay.endsWith('|wei'),
      )!
      await old.service.store.transaction(async (tx) => {
        const { prepaidMaxFeePerGas: _, ...signed } = (await tx.get('sendTransactions', id))!
        await tx.put('sendTransactions', signed)
        await tx.put('gasUsage', { ...usage, gas: String(gasLimit * fee) })
        await tx.put('gasUsage', {
          ...usage,
          id: `${usage.id}.earlier`,
          sendTransactionId: 'earlier',
          gas: String(gasLimit * most - gasLimit * fee - raise - 1n),
        })
      })
      const row = await waitForReplacements(old, id, 3)
      expect(row.replacements).toBe(3)
      expect(row.priorHashes).toHaveLength(1)
      expect(BigInt(row.fees!.maxFeePerGas)).toBe((fee * 125n) / 100n)
      const counted = (await old.service.store.all('gasUsage'))
        .filter((r) => r.sendTransactionId === id && r.userDay.endsWith('|wei'))
        .map((r) => BigInt(r.gas))
        .sort()
      expect(counted).toEqual([raise, gasLimit * fee].sort())
    } finally {
      await chain.rpc('evm_setAutomine', [true])
    }
    await chain.rpc('evm_mine', [])
    await old.service.close()
  })

  it("a sponsored send priced under the market (1 wei, no tip) is refused before signing, so it cannot hold the sponsor's next nonce for every user", async () => {
    const h = await service({ perUserPerDayWei: String(10n ** 15n) })
    const sponsor = sponsorAddress(h.service.runtime)!
    const attacker = await endUser(h)
    const victim = await endUser(h)
    const nonce = await pendingNonce(sponsor)
    const block = (await chain.rpc('eth_getBlockByNumber', ['latest', false])) as { baseFeePerGas: string }
    const baseFee = BigInt(block.baseFeePerGas)
    const mint = erc20Call('mint', DEAD, 1n)
    for (const [fees, field] of [
      [{ maxFeePerGas: '1', maxPriorityFeePerGas: '0' }, 'parameters.maxFeePerGas'],
      [{ maxFeePerGas: String(baseFee - 1n) }, 'parameters.maxFeePerGas'],
      [
        { maxFeePerGas: String(2n * baseFee + GWEI), maxPriorityFeePerGas: '0' },
        'parameters.maxPriorityFeePerGas',
      ],
      [
        { maxFeePerGas: String(2n * baseFee + GWEI), maxPriorityFeePerGas: String(GWEI / 2n - 1n) },
        'parameters.maxPriorityFeePerGas',
      ],
    ] as const) {
      const reply = await attacker.send({ sponsor: true, calls: [mint], ...fees })
      expect(
        { status: reply.status, errorCode: reply.body.details?.errorCode, field: reply.body.details?.field },
        JSON.stringify(fees),
      ).toEqual({ status: 400, errorCode: 'FIELD_INVALID', field })
    }
    expect(await sendCount(h)).toBe(0)
    expect(await pendingNonce(sponsor)).toBe(nonce)
    // At the market (the base fee, half the node's tip or more) a caller's own fees still go through.
    const priced = await attacker.send({
      sponsor: true,
      calls: [erc20Call('mint', DEAD, 2n)],
      maxFeePerGas: String(baseFee + GWEI),
      maxPriorityFeePerGas: String(GWEI / 2n),
    })
    const pricedId = resultOf('eth_send_transaction', priced).sendTransactionStatusId as string
    expect(
      (await waitForSend(h, pricedId, { organizationId: attacker.organizationId, as: attacker.as })).txStatus,
    ).toBe('INCLUDED')
    // Another end user's sponsored send takes the next nonce and is mined.
    const id = resultOf(
      'eth_send_transaction',
      await victim.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 3n)] }),
    ).sendTransactionStatusId as string
    expect(
      (await waitForSend(h, id, { organizationId: victim.organizationId, as: victim.as })).txStatus,
    ).toBe('INCLUDED')
    expect(await h.service.store.get('sendTransactions', id)).toMatchObject({ nonce: String(nonce + 1n) })
    await h.service.close()
  })

  it("a sponsored send's calls carry at most what fits a transaction the node takes (128 KiB): more is a 400 naming the call's data", async () => {
    const h = await service()
    const user = await endUser(h)
    // 40 calls of 3,200 bytes: 128,000 bytes of data, under the request body limit; the batch
    // encodes each in 3,392 bytes, past 126 KiB at the 39th.
    const call = (i: number) => {
      const mint = erc20Call('mint', DEAD, BigInt(i + 1))
      return { ...mint, data: mint.data + '00'.repeat(3200 - (mint.data.length - 2) / 2) }
    }
    const reply = await user.send({ sponsor: true, calls: Array.from({ length: 40 }, (_, i) => call(i)) })
    expect(reply.status).toBe(400)
    expect(reply.body.details).toMatchObject({
      errorCode: 'FIELD_INVALID',
      field: 'parameters.calls[38].data',
    })
    expect(await sendCount(h)).toBe(0)
    // 38 of them fit, and are mined.
    const id = resultOf(
      'eth_send_transaction',
      await user.send({ sponsor: true, calls: Array.from({ length: 38 }, (_, i) => call(i)) }),
    ).sendTransactionStatusId as string
    expect((await waitForSend(h, id, { organizationId: user.organizationId, as: user.as })).txStatus).toBe(
      'INCLUDED',
    )
    await h.service.close()
  })

  it('a batch that reverts on chain (not simulated: the account pays) is FAILED with the published revertChain', async () => {
    const h = await service()
    const { addresses } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'payer', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const from = addresses[0] as string
    await chain.fund(from, 10n ** 18n)
    const deadBefore = await chain.tokenBalance(DEAD)
    h.clock.set(Date.now())
    const reply = await h.submit('eth_send_transaction', {
      from,
      caip2: CAIP2,
      calls: [erc20Call('mint', DEAD, 1n), erc20Call('transfer', DEAD, 9n)],
    })
    const id = resultOf('eth_send_transaction', reply).sendTransactionStatusId as string
    const status = await waitForSend(h, id)
    expect(status.txStatus).toBe('FAILED')
    const entry = {
      errorType: 'custom',
      displayMessage: `ERC20InsufficientBalance(${from.toLowerCase()}, 0, 9)`,
      custom: {
        errorName: 'ERC20InsufficientBalance',
        paramsJson: JSON.stringify([from.toLowerCase(), '0', '9']),
      },
    }
    expect(status.error).toMatchObject({ revertChain: [entry], eth: { revertChain: [entry] } })
    expect(status.txError).toContain('ERC20InsufficientBalance')
    // Atomic: the mint before the failing transfer did not happen either.
    expect(await chain.tokenBalance(DEAD)).toBe(deadBefore)
    await h.service.close()
  })
})
