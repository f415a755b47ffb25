// The fees an L2 charges a transaction's sender beside its gas that no field of the transaction
// caps, and that `l1DataFee.test.ts` (an OP Stack chain's L1 data fee) does not cover: Scroll's L1
// data fee, priced by its `L1GasPriceOracle` predeploy (which since Feynman and Galileo charges
// badly compressing data more), and an OP Stack chain's operator fee (Isthmus, its formula changed
// in Jovian), priced by the `GasPriceOracle`'s `getOperatorFee`. The chain is anvil with stand-in
// oracles (l2FeeOracles.sol, compiled here with the pinned solc) at the predeploys' addresses; a
// node whose receipts report the fees is anvil behind a `fetch` that adds them.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  GAS_PRICE_ORACLE,
  OPERATOR_FEE_RECHECK_MS,
  SCROLL_L1_GAS_PRICE_ORACLE,
} from '../../src/sending/l1DataFee.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import { createHarness, fakeClock, limitedSubOrganization, resultOf } from '../../src/testing/harness.ts'
import { unsignedTransfer } from '../../src/testing/unsignedTransfer.ts'
import { type Chain, endUser, sendCount, sponsoredService, startChain, waitForSend } from './sendSupport.ts'

let chain: Chain
const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dead'
const GWEI = 10n ** 9n
const code: Record<'scroll' | 'isthmus' | 'preIsthmus', string> = { scroll: '', isthmus: '', preIsthmus: '' }

const selector = (signature: string) => bytesToHex(keccak_256(utf8ToBytes(signature)).slice(0, 4))
const slot = (n: number) => `0x${n.toString(16)}`
const word = (value: bigint) => `0x${value.toString(16).padStart(64, '0')}`

/** The chain with one oracle: Scroll's, OP Stack's since Isthmus, or OP Stack's before (no operator fee). */
async function placeOracle(which: keyof typeof code) {
  await chain.rpc('anvil_setCode', [GAS_PRICE_ORACLE, which === 'scroll' ? '0x' : code[which]])
  await chain.rpc('anvil_setCode', [SCROLL_L1_GAS_PRICE_ORACLE, which === 'scroll' ? code.scroll : '0x'])
}

/** Sets the stand-ins' storage: the L1 fee a byte (slot 0), the operator fee a gas and a transaction. */
async function setFees(fees: { perByte?: bigint; perGas?: bigint; constant?: bigint }) {
  const oracle = (await chain.rpc('eth_getCode', [SCROLL_L1_GAS_PRICE_ORACLE, 'latest'])) !== '0x'
  const at = oracle ? SCROLL_L1_GAS_PRICE_ORACLE : GAS_PRICE_ORACLE
  if (fees.perByte !== undefined) await chain.rpc('anvil_setStorageAt', [at, slot(0), word(fees.perByte)])
  if (fees.perGas !== undefined) await chain.rpc('anvil_setStorageAt', [at, slot(1), word(fees.perGas)])
  if (fees.constant !== undefined) await chain.rpc('anvil_setStorageAt', [at, slot(2), word(fees.constant)])
}

/** What the Scroll stand-in charges for `hex` (its `getL1Fee`). */
async function scrollFeeOf(hex: string): Promise<bigint> {
  const bytes = hex.replace(/^0x/, '')
  const length = bytes.length / 2
  const pad = (n: number) => n.toString(16).padStart(64, '0')
  const data = `0x${selector('getL1Fee(bytes)')}${pad(32)}${pad(length)}${bytes.padEnd(Math.ceil(length / 32) * 64, '0')}`
  return BigInt((await chain.rpc('eth_call', [{ to: SCROLL_L1_GAS_PRICE_ORACLE, data }, 'latest'])) as string)
}

/** `length` bytes a caller could pick that do not compress (no byte repeats the one before). */
const randomBytes = (length: number) =>
  Array.from({ length }, (_, i) => (i % 255) + 1)
    .map((byte) => byte.toString(16).padStart(2, '0'))
    .join('')

/**
 * A node whose receipts carry `fields` (as an OP Stack node's carry `l1Fee` and, since Isthmus,
 * the operator fee's parameters) while they are set, and that counts the calls of `getOperatorFee`.
 */
function reportingNode() {
  const node = {
    fields: undefined as Record<string, string> | undefined,
    operatorFeeCalls: 0,
    fetch: (async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { method: string; params: { data?: string }[] }
      if (
        body.method === 'eth_call' &&
        body.params[0]?.data?.startsWith(`0x${selector('getOperatorFee(uint256)')}`)
      )
        node.operatorFeeCalls++
      const response = await fetch(input, init)
      if (body.method !== 'eth_getTransactionReceipt' || !node.fields) return response
      const answer = (await response.json()) as { result: Record<string, unknown> | null }
      if (answer.result) Object.assign(answer.result, node.fields)
      return new Response(JSON.stringify(answer), { headers: { 'content-type': 'application/json' } })
    }) as typeof fetch,
  }
  return node
}

beforeAll(async () => {
  chain = await startChain()
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string }
  const source = readFileSync(new URL('./l2FeeOracles.sol', import.meta.url), 'utf8')
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'l2FeeOracles.sol': { content: source } },
        settings: {
          evmVersion: 'prague',
          optimizer: { enabled: true, runs: 200 },
          outputSelection: { '*': { '*': ['evm.deployedBytecode.object'] } },
        },
      }),
    ),
  ) as {
    errors?: { severity: string; formattedMessage: string }[]
    contracts: Record<string, Record<string, { evm: { deployedBytecode: { object: string } } }>>
  }
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error')
  if (errors.length > 0) throw new Error(errors.map((error) => error.formattedMessage).join('\n'))
  const compiled = output.contracts['l2FeeOracles.sol']!
  code.scroll = `0x${compiled.ScrollStyleL1FeeOracle!.evm.deployedBytecode.object}`
  code.isthmus = `0x${compiled.IsthmusGasPriceOracle!.evm.deployedBytecode.object}`
  code.preIsthmus = (
    JSON.parse(
      readFileSync(new URL('../../../../contracts/test/L1FeeOracle.json', import.meta.url), 'utf8'),
    ) as { deployedBytecode: string }
  ).deployedBytecode
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

describe("Scroll's L1 data fee", () => {
  it("counts in the sponsor's wei caps at the most data of the send's length can cost, however well the caller's data compresses: a caller with big calldata is refused at the cap, not paid for", async () => {
    await placeOracle('scroll')
    const feePerByte = 10n ** 13n
    await setFees({ perByte: feePerByte })
    const h = await sponsoredService(chain, { perTransactionWei: String(10n ** 17n) })
    const sponsor = sponsorAddress(h.service.runtime)!
    const user = await endUser(h)
    const call = (data: string) => ({ to: DEAD, value: '0', data: `0x${data}` })

    // 32 bytes of one byte repeated: priced as if they did not compress at all, twice over.
    const small = resultOf(
      'eth_send_transaction',
      await user.send({ sponsor: true, calls: [call('ab'.repeat(32))] }),
    )
    const row = (await h.service.store.get('sendTransactions', small.sendTransactionStatusId as string))!
    const l1Fee = BigInt(row.l1Fee!)
    const signedBytes = BigInt((row.signedTransaction.length - 2) / 2)
    // What the same transaction costs with data that compresses badly (the signature's bytes are
    // random too): no more than half of what is counted.
    expect(l1Fee).toBeGreaterThanOrEqual(2n * (await scrollFeeOf(randomBytes(Number(signedBytes)))))
    expect(l1Fee).toBeGreaterThanOrEqual(2n * (await scrollFeeOf(row.signedTransaction)))
    expect(l1Fee).toBeLessThan(2n * 2_000n * feePerByte)
    const counted = (await h.service.store.all('gasUsage'))
      .filter((usage) => usage.sendTransactionId === row.id && usage.userDay.endsWith('|wei'))
      .map((usage) => BigInt(usage.gas))
    expect(counted).toEqual([BigInt(row.fees!.gasLimit) * BigInt(row.prepaidMaxFeePerGas!) + l1Fee])
    expect(
      (await waitForSend(h, row.id, { organizationId: user.organizationId, as: user.as })).txStatus,
    ).toBe('INCLUDED')

    // 6 KB of data: its L2 gas is far under the cap, its L1 data fee is not; refused before
    // anything is signed or paid.
    const [balance, sends] = [await chain.balance(sponsor), await sendCount(h)]
    expect(await user.send({ sponsor: true, calls: [call(randomBytes(6_000))] })).toMatchObject({
      status: 429,
      body: { details: { errorCode: 'GAS_CAP_EXCEEDED', cap: 'per-transaction wei' } },
    })
    // The same length of one byte repeated is refused too: the caller picks the bytes.
    expect(await user.send({ sponsor: true, calls: [call('ab'.repeat(6_000))] })).toMatchObject({
      status: 429,
      body: { details: { errorCode: 'GAS_CAP_EXCEEDED', cap: 'per-transaction wei' } },
    })
    expect(await sendCount(h)).toBe(sends)
    expect(await chain.balance(sponsor)).toBe(balance)

    // Where the L1 data costs nothing it passes: the refusal was its L1 fee's.
    await setFees({ perByte: 0n })
    const free = await user.send({ sponsor: true, calls: [call(randomBytes(6_000))] })
    expect(free.status).toBe(200)
    const freeRow = (await h.service.store.get(
      'sendTransactions',
      resultOf('eth_send_transaction', free).sendTransactionStatusId as string,
    ))!
    expect(freeRow.l1Fee).toBeUndefined()
    await h.service.close()
  })

  it("sign_transaction under a native limit of the chain counts it, and an unsponsored send's native limit reserves it, then keeps what the receipt says", async () => {
    await placeOracle('scroll')
    const feePerByte = 10n ** 9n
    await setFees({ perByte: feePerByte })
    const node = reportingNode()
    const h = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: { [CAIP2]: chain.url },
      sending: { pollIntervalMs: 20 },
      fetch: node.fetch,
    })
    const usedOf = async (limited: { organizationId: string; spendingLimitId: string; as: never }) =>
      BigInt(
        (await h.query('latchkey_list_spending_limits', {}, limited)).body.spendingLimits.find(
          (limit: { spendingLimitId: string }) => limit.spendingLimitId === limited.spendingLimitId,
        ).used,
      )
    const data = `0x${'cd'.repeat(100)}`
    const l2Fee = 60_000n * 2n * GWEI

    // sign_transaction: the value, the L2 fee at its most, and twice the bound for its bytes.
    const limited = await limitedSubOrganization(h, { amount: String(10n ** 18n), caip2: CAIP2 })
    const unsignedTransaction = unsignedTransfer({
      value: 10n,
      nonce: 0,
      chainId: 31337,
      gas: 60_000n,
      data,
      maxFeePerGas: 2n * GWEI,
    })
    h.clock.set(Date.now())
    const signed = await h.submit(
      'sign_transaction',
      { signWith: limited.from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction },
      limited,
    )
    expect(signed.status).toBe(200)
    const signedL1 = (await usedOf(limited as never)) - 10n - l2Fee
    const size = (unsignedTransaction.length - 2) / 2
    expect(signedL1).toBeGreaterThanOrEqual(2n * (await scrollFeeOf(randomBytes(size + 67))))
    expect(signedL1).toBeLessThanOrEqual(2n * BigInt(size + 68) * feePerByte)

    // An unsponsored send: reserved with its L1 fee; the receipt's `l1Fee` is what it keeps.
    await chain.fund(limited.from, 10n ** 18n)
    const before = await usedOf(limited as never)
    node.fields = { l1Fee: '0x3039' }
    h.clock.set(Date.now())
    const id = resultOf(
      'eth_send_transaction',
      await h.submit(
        'eth_send_transaction',
        {
          from: limited.from,
          caip2: CAIP2,
          calls: [{ to: DEAD, value: '10', data }],
          gasLimit: '60000',
          maxFeePerGas: String(2n * GWEI),
        },
        limited,
      ),
    ).sendTransactionStatusId as string
    const row = (await h.service.store.get('sendTransactions', id))!
    expect(BigInt(row.l1Fee!)).toBeGreaterThanOrEqual(2n * (await scrollFeeOf(row.signedTransaction)))
    // Every unit of gas at the most a replacement may offer, and the L1 fee.
    expect(BigInt(row.reservedFee!)).toBeGreaterThanOrEqual(60_000n * 2n * GWEI + BigInt(row.l1Fee!))
    expect(await usedOf(limited as never)).toBe(before + 10n + BigInt(row.reservedFee!))
    expect((await waitForSend(h, id, { organizationId: limited.organizationId, as: limited })).txStatus).toBe(
      'INCLUDED',
    )
    const receipt = (await h.service.store.get('sendTransactions', id))!.receipt!
    expect(await usedOf(limited as never)).toBe(
      before + 10n + BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice) + 12_345n,
    )
    await h.service.close()
  })
})

describe("an OP Stack chain's operator fee", () => {
  // Its gas at the most its replacements may offer: 5 gwei raised 25% three times.
  const fees = { gasLimit: '400000', maxFeePerGas: String(5n * GWEI), maxPriorityFeePerGas: String(GWEI) }
  const gasWei = 400_000n * 9_765_625_000n
  const perGas = 10n ** 9n
  const operatorFee = 400_000n * perGas + 7n

  it("counts in the sponsor's wei caps at the send's gas limit (one it takes past the cap is refused); once mined, the caps keep what the receipt says it paid, by Isthmus's formula or Jovian's, or what was counted where it says nothing", async () => {
    await placeOracle('isthmus')
    await setFees({ perByte: 0n, perGas, constant: 7n })
    const node = reportingNode()
    const h = await sponsoredService(
      chain,
      { perTransactionWei: String(gasWei + operatorFee) },
      {},
      { fetch: node.fetch },
    )
    const user = await endUser(h)
    const call = { to: DEAD, value: '0', data: `0x${'ab'.repeat(32)}` }
    const wei = async (id: string) =>
      (await h.service.store.all('gasUsage'))
        .filter((usage) => usage.sendTransactionId === id && usage.userDay.endsWith('|wei'))
        .reduce((total, usage) => total + BigInt(usage.gas), 0n)

    // Room for all of it but 1 wei of its operator fee: refused before signing.
    await setFees({ constant: 8n })
    expect(await user.send({ sponsor: true, calls: [call], ...fees })).toMatchObject({
      status: 429,
      body: { details: { errorCode: 'GAS_CAP_EXCEEDED', cap: 'per-transaction wei' } },
    })
    await setFees({ constant: 7n })

    const sendAndMine = async (fields: Record<string, string> | undefined) => {
      node.fields = fields
      const id = resultOf('eth_send_transaction', await user.send({ sponsor: true, calls: [call], ...fees }))
        .sendTransactionStatusId as string
      const row = (await h.service.store.get('sendTransactions', id))!
      expect(row.operatorFee).toBe(String(operatorFee))
      expect(row.l1Fee).toBeUndefined()
      expect(await wei(id)).toBe(gasWei + operatorFee)
      expect((await waitForSend(h, id, { organizationId: user.organizationId, as: user.as })).txStatus).toBe(
        'INCLUDED',
      )
      const { receipt } = (await h.service.store.get('sendTransactions', id))!
      return {
        settled: await wei(id),
        l2: BigInt(receipt!.gasUsed) * BigInt(receipt!.effectiveGasPrice),
        gasUsed: BigInt(receipt!.gasUsed),
      }
    }
    // Jovian: the gas used times the scalar times 100, and the constant.
    const jovian = await sendAndMine({
      l1Fee: '0x0',
      operatorFeeScalar: '0x3',
      operatorFeeConstant: '0x5',
      daFootprintGasScalar: '0x190',
    })
    expect(jovian.settled).toBe(jovian.l2 + jovian.gasUsed * 300n + 5n)
    // Isthmus: the gas used times the scalar over 1e6, and the constant.
    const isthmus = await sendAndMine({
      l1Fee: '0x0',
      operatorFeeScalar: '0x1e8480',
      operatorFeeConstant: '0x5',
    })
    expect(isthmus.settled).toBe(isthmus.l2 + isthmus.gasUsed * 2n + 5n)
    // A receipt with its L1 fee and no operator fee's parameters: it paid none.
    const none = await sendAndMine({ l1Fee: '0x0' })
    expect(none.settled).toBe(none.l2)
    // A receipt that says nothing of either: the operator fee stays as counted.
    const silent = await sendAndMine(undefined)
    expect(silent.settled).toBe(silent.l2 + operatorFee)
    await h.service.close()
  }, 30_000)

  it('sign_transaction under a native limit of the chain counts it at the gas limit, beside the L1 data fee', async () => {
    await placeOracle('isthmus')
    const feePerByte = 10n ** 9n
    await setFees({ perByte: feePerByte, perGas, constant: 7n })
    const h = await createHarness({ clock: fakeClock(Date.now()), rpc: { [CAIP2]: chain.url } })
    const limited = await limitedSubOrganization(h, { amount: String(10n ** 18n), caip2: CAIP2 })
    const unsignedTransaction = unsignedTransfer({
      value: 10n,
      nonce: 0,
      chainId: 31337,
      gas: 60_000n,
      maxFeePerGas: 2n * GWEI,
    })
    h.clock.set(Date.now())
    const reply = await h.submit(
      'sign_transaction',
      { signWith: limited.from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction },
      limited,
    )
    expect(reply.status).toBe(200)
    const size = BigInt((unsignedTransaction.length - 2) / 2)
    const used = (await h.query('latchkey_list_spending_limits', {}, limited)).body.spendingLimits.find(
      (limit: { spendingLimitId: string }) => limit.spendingLimitId === limited.spendingLimitId,
    ).used
    expect(used).toBe(
      String(10n + 60_000n * 2n * GWEI + 2n * (size + 68n) * feePerByte + 60_000n * perGas + 7n),
    )
    await h.service.close()
  })

  it('costs nothing on an oracle without getOperatorFee (before Isthmus), asked once; past the recheck time it is asked again (the chain may have upgraded)', async () => {
    await placeOracle('preIsthmus')
    await setFees({ perByte: 0n })
    const node = reportingNode()
    const h = await sponsoredService(chain, {}, {}, { fetch: node.fetch })
    const user = await endUser(h)
    const send = async (now: number) => {
      h.clock.set(now)
      const reply = await h.submit(
        'eth_send_transaction',
        {
          from: user.from,
          caip2: CAIP2,
          sponsor: true,
          calls: [{ to: DEAD, value: '0', data: '0x' }],
          ...fees,
        },
        user.as,
      )
      return (await h.service.store.get(
        'sendTransactions',
        resultOf('eth_send_transaction', reply).sendTransactionStatusId as string,
      ))!
    }
    const first = await send(Date.now())
    const second = await send(Date.now())
    expect([first.operatorFee, second.operatorFee]).toEqual([undefined, undefined])
    expect(node.operatorFeeCalls).toBe(1)

    // The chain upgrades to Isthmus: until the recheck time the oracle is not asked again; past
    // it, it is, and its operator fee counted.
    await placeOracle('isthmus')
    await setFees({ perByte: 0n, perGas, constant: 7n })
    expect((await send(Date.now())).operatorFee).toBeUndefined()
    expect(node.operatorFeeCalls).toBe(1)
    const upgraded = await send(Date.now() + OPERATOR_FEE_RECHECK_MS + 1_000)
    expect(upgraded.operatorFee).toBe(String(operatorFee))
    expect(node.operatorFeeCalls).toBe(2)
    await h.service.close()
  })
})
