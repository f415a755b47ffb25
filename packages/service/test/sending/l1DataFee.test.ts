// The L1 data fee of an OP Stack chain (OP Mainnet, Base): its sender pays it beside the L2 gas,
// and no field of the signed transaction caps it. The chain here is anvil with the oracle's code
// (contracts/test/L1FeeOracle.sol, a stand-in for the GasPriceOracle predeploy) at its address,
// priced per byte; a node that reports `l1Fee` in its receipts, as an OP Stack node does, is
// anvil behind a `fetch` that adds it.
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { GAS_PRICE_ORACLE } from '../../src/sending/l1DataFee.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  limitedSubOrganization,
  resultOf,
} from '../../src/testing/harness.ts'
import { unsignedTransfer } from '../../src/testing/unsignedTransfer.ts'
import {
  type Chain,
  endUser,
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

const setFeePerByte = (wei: bigint) =>
  chain.rpc('anvil_setStorageAt', [GAS_PRICE_ORACLE, '0x0', `0x${wei.toString(16).padStart(64, '0')}`])

/** What the oracle charges for the L1 data of a signed transaction (its `getL1Fee`). */
async function oracleFeeOf(signed: string): Promise<bigint> {
  const bytes = signed.slice(2)
  const length = bytes.length / 2
  const word = (n: number) => n.toString(16).padStart(64, '0')
  const data = `0x49948e0e${word(32)}${word(length)}${bytes.padEnd(Math.ceil(length / 32) * 64, '0')}`
  return BigInt((await chain.rpc('eth_call', [{ to: GAS_PRICE_ORACLE, data }, 'latest'])) as string)
}

/**
 * A node whose receipts carry `l1Fee`, as an OP Stack node's do: anvil's, through its `fetch`,
 * with `reported` as the fee while it is set.
 */
function l1FeeReportingNode() {
  const node = {
    reported: undefined as bigint | undefined,
    fetch: (async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { id: number; method: string }
      const response = await fetch(input, init)
      if (body.method !== 'eth_getTransactionReceipt' || node.reported === undefined) return response
      const answer = (await response.json()) as { result: Record<string, unknown> | null }
      if (answer.result) answer.result.l1Fee = `0x${node.reported.toString(16)}`
      return new Response(JSON.stringify(answer), { headers: { 'content-type': 'application/json' } })
    }) as typeof fetch,
  }
  return node
}

beforeAll(async () => {
  chain = await startChain()
  const oracle = JSON.parse(
    readFileSync(new URL('../../../../contracts/test/L1FeeOracle.json', import.meta.url), 'utf8'),
  ) as { deployedBytecode: string }
  await chain.rpc('anvil_setCode', [GAS_PRICE_ORACLE, oracle.deployedBytecode])
}, 60_000)

beforeEach(async () => {
  await setFeePerByte(0n)
})

afterAll(async () => {
  await chain?.node.close()
})

describe('the L1 data fee of an OP Stack chain', () => {
  it("counts in the sponsor's wei caps: calldata the caller picks cannot make the sponsor pay past them", async () => {
    const feePerByte = 10n ** 13n
    const perTransactionWei = 10n ** 17n
    const h = await sponsoredService(chain, { perTransactionWei: String(perTransactionWei) })
    const sponsor = sponsorAddress(h.service.runtime)!
    const user = await endUser(h)
    const call = (bytes: number) => ({ to: DEAD, value: '0', data: `0x${'ab'.repeat(bytes)}` })
    await setFeePerByte(feePerByte)

    // 32 bytes of data: the L1 fee counted is at least twice what the signed transaction costs.
    const small = resultOf('eth_send_transaction', await user.send({ sponsor: true, calls: [call(32)] }))
    const row = (await h.service.store.get('sendTransactions', small.sendTransactionStatusId as string))!
    const l1Fee = BigInt(row.l1Fee!)
    expect(l1Fee).toBeGreaterThanOrEqual(2n * (await oracleFeeOf(row.signedTransaction)))
    expect(l1Fee).toBeLessThan(2n * 2_000n * feePerByte)
    const counted = (await h.service.store.all('gasUsage'))
      .filter((usage) => usage.sendTransactionId === row.id && usage.userDay.endsWith('|wei'))
      .map((usage) => BigInt(usage.gas))
    // Its gas at the most its replacements may offer, and its L1 fee.
    expect(counted).toEqual([BigInt(row.fees!.gasLimit) * BigInt(row.prepaidMaxFeePerGas!) + l1Fee])
    expect(
      (await waitForSend(h, row.id, { organizationId: user.organizationId, as: user.as })).txStatus,
    ).toBe('INCLUDED')

    // 6 KB of data: its L2 gas is far under the cap (about 0.001 ETH), its L1 data fee is not.
    const [balance, sends] = [await chain.balance(sponsor), await sendCount(h)]
    const big = await user.send({ sponsor: true, calls: [call(6_000)] })
    expect(big).toMatchObject({
      status: 429,
      body: { details: { errorCode: 'GAS_CAP_EXCEEDED', cap: 'per-transaction wei' } },
    })
    expect(await sendCount(h)).toBe(sends)
    expect(await chain.balance(sponsor)).toBe(balance)

    // The same send where the L1 data costs nothing passes: the refusal was its L1 fee's.
    await setFeePerByte(0n)
    const free = await user.send({ sponsor: true, calls: [call(6_000)] })
    expect(free.status).toBe(200)
    const freeId = resultOf('eth_send_transaction', free).sendTransactionStatusId as string
    const freeRow = (await h.service.store.get('sendTransactions', freeId))!
    expect(freeRow.l1Fee).toBeUndefined()
    await h.service.close()
  })

  it('the per-transaction wei cap judges a sponsored send with its L1 fee, at the most its replacements may offer: one that fits only without the L1 fee is refused; one that fits is replaced and counts nothing more', async () => {
    const feePerByte = 10n ** 13n
    const fees = { gasLimit: '400000', maxFeePerGas: String(5n * GWEI), maxPriorityFeePerGas: String(GWEI) }
    const call = { to: DEAD, value: '0', data: `0x${'ab'.repeat(32)}` }
    await setFeePerByte(feePerByte)
    // The L1 fee such a send counts (a first user's batch, with its authorization, is the same size).
    const probe = await sponsoredService(chain)
    const probeUser = await endUser(probe)
    const probed = resultOf(
      'eth_send_transaction',
      await probeUser.send({ sponsor: true, calls: [call], ...fees }),
    )
    const l1Fee = BigInt(
      (await probe.service.store.get('sendTransactions', probed.sendTransactionStatusId as string))!.l1Fee!,
    )
    await probe.service.close()
    // Its gas at the most its replacements may offer: 5 gwei raised 25% three times.
    const gasWei = 400_000n * 9_765_625_000n
    const h = await sponsoredService(
      chain,
      { perTransactionWei: String(gasWei + l1Fee) },
      { replaceAfterMs: 100 },
    )
    const user = await endUser(h)
    await chain.rpc('evm_setAutomine', [false])
    try {
      // Room for all of it but 1 wei of its L1 fee: refused before signing.
      await setFeePerByte(feePerByte + 1n)
      expect(await user.send({ sponsor: true, calls: [call], ...fees })).toMatchObject({
        status: 429,
        body: { details: { errorCode: 'GAS_CAP_EXCEEDED', cap: 'per-transaction wei' } },
      })
      await setFeePerByte(feePerByte)
      const id = resultOf('eth_send_transaction', await user.send({ sponsor: true, calls: [call], ...fees }))
        .sendTransactionStatusId as string
      const before = (await h.service.store.get('sendTransactions', id))!
      expect(BigInt(before.l1Fee!)).toBe(l1Fee)
      // Stuck: past replaceAfterMs the worker replaces it, each time within what was counted.
      const row = await waitForReplacements(h, id, 3)
      expect(row.replacements).toBe(3)
      expect(row.priorHashes).toHaveLength(3)
      expect(row.fees!.maxFeePerGas).toBe('9765625000')
      const wei = (await h.service.store.all('gasUsage')).filter((r) => r.userDay.endsWith('|wei'))
      expect(wei.map((r) => BigInt(r.gas))).toEqual([gasWei + l1Fee])
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await h.service.close()
    }
  }, 30_000)

  it("an unsponsored send's native limit reserves its L1 fee, then keeps what the receipt says it paid (past the reservation too), or the reservation where it says nothing", async () => {
    const feePerByte = 10n ** 9n
    const node = l1FeeReportingNode()
    const h = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: { [CAIP2]: chain.url },
      sending: { pollIntervalMs: 20 },
      fetch: node.fetch,
    })
    const limited = await limitedSubOrganization(h, { amount: String(10n ** 18n), caip2: CAIP2 })
    await chain.fund(limited.from, 10n ** 18n)
    await setFeePerByte(feePerByte)
    const used = async () =>
      BigInt(
        (await h.query('latchkey_list_spending_limits', {}, limited)).body.spendingLimits.find(
          (limit: { spendingLimitId: string }) => limit.spendingLimitId === limited.spendingLimitId,
        ).used,
      )
    const send = async () => {
      h.clock.set(Date.now())
      const reply = await h.submit(
        'eth_send_transaction',
        {
          from: limited.from,
          caip2: CAIP2,
          calls: [{ to: DEAD, value: '10', data: `0x${'cd'.repeat(100)}` }],
          gasLimit: '60000',
          maxFeePerGas: String(2n * GWEI),
        },
        limited,
      )
      return resultOf('eth_send_transaction', reply).sendTransactionStatusId as string
    }

    node.reported = 12_345n
    const first = await send()
    const row = (await h.service.store.get('sendTransactions', first))!
    const l1Fee = BigInt(row.l1Fee!)
    expect(l1Fee).toBeGreaterThanOrEqual(2n * (await oracleFeeOf(row.signedTransaction)))
    // Reserved: the value, every unit of gas at the most a replacement may offer, and the L1 fee.
    expect(BigInt(row.reservedFee!)).toBeGreaterThan(60_000n * 2n * GWEI + l1Fee - 1n)
    expect(await used()).toBe(10n + BigInt(row.reservedFee!))
    expect(
      (await waitForSend(h, first, { organizationId: limited.organizationId, as: limited })).txStatus,
    ).toBe('INCLUDED')
    const mined = (await h.service.store.get('sendTransactions', first))!.receipt!
    const gasPaid = BigInt(mined.gasUsed) * BigInt(mined.effectiveGasPrice)
    expect(await used()).toBe(10n + gasPaid + 12_345n)

    // A receipt without `l1Fee`: the L1 fee stays counted as it was reserved.
    node.reported = undefined
    const second = await send()
    const secondRow = (await h.service.store.get('sendTransactions', second))!
    expect(
      (await waitForSend(h, second, { organizationId: limited.organizationId, as: limited })).txStatus,
    ).toBe('INCLUDED')
    const secondReceipt = (await h.service.store.get('sendTransactions', second))!.receipt!
    const afterSecond =
      10n +
      gasPaid +
      12_345n +
      10n +
      BigInt(secondReceipt.gasUsed) * BigInt(secondReceipt.effectiveGasPrice) +
      BigInt(secondRow.l1Fee!)
    expect(await used()).toBe(afterSecond)

    // A receipt whose `l1Fee` is past the reservation (the L1's fees more than doubled while the
    // send waited): the limit keeps what was paid, on top of what was reserved.
    node.reported = 10n ** 15n
    const third = await send()
    expect(BigInt((await h.service.store.get('sendTransactions', third))!.l1Fee!)).toBeLessThan(node.reported)
    expect(
      (await waitForSend(h, third, { organizationId: limited.organizationId, as: limited })).txStatus,
    ).toBe('INCLUDED')
    const thirdReceipt = (await h.service.store.get('sendTransactions', third))!.receipt!
    expect(await used()).toBe(
      afterSecond +
        10n +
        BigInt(thirdReceipt.gasUsed) * BigInt(thirdReceipt.effectiveGasPrice) +
        node.reported,
    )
    await h.service.close()
  })

  it("a sponsored send's caps keep the L1 fee the receipt reports, past what was counted for it too (the L1's fees rose while it waited)", async () => {
    await setFeePerByte(10n ** 9n)
    const node = l1FeeReportingNode()
    const h = await sponsoredService(chain, {}, {}, { fetch: node.fetch })
    const user = await endUser(h)
    const wei = async (id: string) =>
      (await h.service.store.all('gasUsage'))
        .filter((usage) => usage.sendTransactionId === id && usage.userDay.endsWith('|wei'))
        .reduce((total, usage) => total + BigInt(usage.gas), 0n)
    const sendAndMine = async (byte: string) => {
      const id = resultOf(
        'eth_send_transaction',
        await user.send({ sponsor: true, calls: [{ to: DEAD, value: '0', data: `0x${byte.repeat(100)}` }] }),
      ).sendTransactionStatusId as string
      const counted = await wei(id)
      expect((await waitForSend(h, id, { organizationId: user.organizationId, as: user.as })).txStatus).toBe(
        'INCLUDED',
      )
      const { receipt } = (await h.service.store.get('sendTransactions', id))!
      return {
        counted,
        settled: await wei(id),
        l2: BigInt(receipt!.gasUsed) * BigInt(receipt!.effectiveGasPrice),
      }
    }
    // Far past what is counted for it (its gas at the most, and twice the oracle's bound).
    node.reported = 10n ** 16n
    const dear = await sendAndMine('cd')
    expect(dear.counted).toBeLessThan(node.reported)
    expect(dear.settled).toBe(dear.l2 + node.reported)
    // Under what was counted: the rest is given back, as before.
    node.reported = 1n
    const cheap = await sendAndMine('ce')
    expect(cheap.settled).toBe(cheap.l2 + 1n)
    await h.service.close()
  }, 30_000)

  it("sign_transaction under a native limit of the chain counts the L1 data fee at twice the oracle's bound for its size; without an answer from the node it is not signed", async () => {
    const feePerByte = 10n ** 9n
    const asked: string[] = []
    const h = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: {
        [CAIP2]: chain.url,
        'eip155:8453': 'http://127.0.0.1:9/',
        'eip155:10': 'http://127.0.0.1:9/odd',
      },
      fetch: async (input, init) => {
        const body = JSON.parse(String(init?.body)) as { id: number; method: string }
        asked.push(body.method)
        // A node whose oracle answers something that is not a number, quoting what it should not.
        if (String(input).endsWith('/odd')) {
          const result = body.method === 'eth_getCode' ? '0x60' : 'upstream-secret-text'
          return new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }), {
            headers: { 'content-type': 'application/json' },
          })
        }
        return fetch(input, init)
      },
    })
    await setFeePerByte(feePerByte)
    const data = `0x${'cd'.repeat(100)}`
    const signed = async (
      as: { from: string; as: never; organizationId: string },
      chainId: number,
      nonce: number,
    ) => {
      const unsignedTransaction = unsignedTransfer({
        value: 10n,
        nonce,
        chainId,
        gas: 60_000n,
        data,
        maxFeePerGas: 2n * GWEI,
      })
      h.clock.set(Date.now())
      const reply = await h.submit(
        'sign_transaction',
        { signWith: as.from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction },
        as,
      )
      return { reply, size: BigInt((unsignedTransaction.length - 2) / 2) }
    }
    const usedOf = async (limited: { organizationId: string; spendingLimitId: string; as: never }) =>
      (await h.query('latchkey_list_spending_limits', {}, limited)).body.spendingLimits.find(
        (limit: { spendingLimitId: string }) => limit.spendingLimitId === limited.spendingLimitId,
      ).used as string
    const l2Fee = 60_000n * 2n * GWEI

    // Counted: the value, the L2 fee at its most, and twice the oracle's bound for the bytes signed.
    const limited = await limitedSubOrganization(h, { amount: String(10n ** 18n), caip2: CAIP2 })
    const first = await signed(limited as never, 31337, 0)
    expect(first.reply.status).toBe(200)
    const l1Fee = 2n * (first.size + 68n) * feePerByte
    expect(await usedOf(limited as never)).toBe(String(10n + l2Fee + l1Fee))

    // Refused where the L1 fee does not fit, though the value and the L2 fee do.
    const tight = await limitedSubOrganization(h, { amount: String(10n + l2Fee + l1Fee - 1n), caip2: CAIP2 })
    const over = await signed(tight as never, 31337, 0)
    expect(over.reply.status).toBe(429)
    expect(over.reply.body.details).toMatchObject({
      errorCode: 'SPENDING_LIMIT_EXCEEDED',
      requested: String(10n + l2Fee + l1Fee),
    })
    expect(over.reply.body.message).toContain(`of which up to ${l2Fee + l1Fee} is the network's fee`)
    expect(await usedOf(tight as never)).toBe('0')
    // The same bytes pass once the L1 data costs nothing: the refusal was its L1 fee's.
    await setFeePerByte(0n)
    expect((await signed(tight as never, 31337, 0)).reply.status).toBe(200)
    expect(await usedOf(tight as never)).toBe(String(10n + l2Fee))

    // A chain whose node does not answer: a limit of its native unit cannot count the L1 fee, so
    // the transaction is not signed (503), and nothing is counted.
    const unpriced = await limitedSubOrganization(h, { amount: String(10n ** 18n), caip2: 'eip155:8453' })
    const down = await signed(unpriced as never, 8453, 0)
    expect(down.reply.status).toBe(503)
    expect(down.reply.body.details).toMatchObject({ errorCode: 'RPC_FAILED' })
    expect(down.reply.body.message).toContain("counts the L1 data fee this transaction's sender pays there")
    expect(await usedOf(unpriced as never)).toBe('0')
    // An answer that cannot be read is a 503 in the service's own words, never the node's.
    const odd = await limitedSubOrganization(h, { amount: String(10n ** 18n), caip2: 'eip155:10' })
    const unread = await signed(odd as never, 10, 0)
    expect(unread.reply.status).toBe(503)
    expect(unread.reply.body.details).toMatchObject({ errorCode: 'RPC_FAILED' })
    expect(unread.reply.body.message).toContain("the eip155:10 node's answer could not be read")
    expect(JSON.stringify(unread.reply.body)).not.toContain('upstream-secret-text')

    // Nothing is asked of any node where no native limit of a chain the service has a node for
    // exists: an organization without limits, and one whose limit is of a chain without a node.
    asked.length = 0
    const free = await h.createSubOrganization({ wallet: { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] } })
    const freeAs = {
      from: free.addresses![0]!,
      as: free.keys[0]! as never,
      organizationId: free.organizationId,
    }
    expect((await signed(freeAs, 8453, 0)).reply.status).toBe(200)
    const elsewhere = await limitedSubOrganization(h, { amount: String(10n ** 18n), caip2: 'eip155:1' })
    expect((await signed(elsewhere as never, 8453, 0)).reply.status).toBe(200)
    expect(await usedOf(elsewhere as never)).toBe('0')
    expect(asked).toEqual([])
    await h.service.close()
  })
})
