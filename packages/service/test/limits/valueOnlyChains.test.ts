// A native limit counts each call's value, but on some EVM chains a precompile moves the caller's
// native coin with none sent: Sei's IBC precompile (0x…1009) `transfer(toAddress, port, channel,
// denom, amount, …)` is nonpayable and sends `amount` usei (native SEI) to any Cosmos address;
// on Cosmos EVM chains (Evmos) the native coin's WERC20 precompile is the bank balance itself, so
// `transfer(to, amount)` moves it. An agent under "10 wei a day of eip155:1329" sent the whole
// balance in one zero-value signature, counted 0, and its allow-list was never asked (from the
// audit's precompileNativeCoin.test.ts). Now a call with calldata under a native limit is signed
// only on a chain known to move its coin only as value (limits/valueOnlyChains.ts).
//
// The other way round, an ERC-20 limit on a contract that is the chain's coin counted only calls
// to it: under "10 WEVMOS a day" a plain transfer of EVMOS (the same balance) was counted 0. Evmos
// is now in limits/nativeTokenContracts.ts; on a chain on neither list (nor in that table) the
// service cannot tell the limited token is not the coin (Metis' METIS at 0xDeadDeAd…0000 is), so
// under an ERC-20 limit there a call that sends value is refused.
import { encodeFunctionData, erc20Abi, type Hex } from 'viem'
import { describe, expect, it } from 'vitest'
import type { Json } from '../../src/testing/harness.ts'
import { accountUnderLimits, unsignedTx } from './accountUnderLimits.ts'

const THIEF = '0x00000000000000000000000000000000000f00d5'
const FRIEND = '0x000000000000000000000000000000000000beef'
const SEI_IBC = '0x0000000000000000000000000000000000001009'
const WEVMOS = '0xD4949664cD82660AaE99bEdc034a0deA8A0bd517'
const L2_TO_L1_MESSAGE_PASSER = '0x4200000000000000000000000000000000000016'
/** Metis Andromeda (eip155:1088): METIS, the native coin, is also this ERC-20. */
const METIS = '0xDeadDeAddeAddEAddeadDEaDDEAdDeaDDeAD0000'
/** Celo's cUSD: an ERC-20 that is not the chain's coin, on a chain whose coin contract is known. */
const CELO_CUSD = '0x765DE816845861e75A25fCA122bb6898B8B1282a'
const TOKEN = '0x00000000000000000000000000000000000070c3'

const SEI_IBC_ABI = [
  {
    inputs: [
      { name: 'toAddress', type: 'string' },
      { name: 'port', type: 'string' },
      { name: 'channel', type: 'string' },
      { name: 'denom', type: 'string' },
      { name: 'amount', type: 'uint256' },
      { name: 'revisionNumber', type: 'uint64' },
      { name: 'revisionHeight', type: 'uint64' },
      { name: 'timeoutTimestamp', type: 'uint64' },
      { name: 'memo', type: 'string' },
    ],
    name: 'transfer',
    outputs: [{ name: 'success', type: 'bool' }],
    stateMutability: 'nonpayable',
    type: 'function',
  },
] as const

const seiIbcTransfer = encodeFunctionData({
  abi: SEI_IBC_ABI,
  functionName: 'transfer',
  args: ['sei1thief', 'transfer', 'channel-0', 'usei', 1_000_000_000n, 1n, 1n, 0n, ''],
})
const erc20Transfer = (to: string, amount: bigint) =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to as Hex, amount] })

const tx = unsignedTx

/** An account under one limit of `asset` (a native one of `caip2` unless named); `used`: that limit's. */
async function setup(
  caip2: string,
  allowedDestinations?: string[],
  valueOnlyChains?: string[],
  asset: Json = { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2 },
) {
  const account = await accountUnderLimits(valueOnlyChains ? { valueOnlyChains } : {})
  const limitId = await account.limit(asset, allowedDestinations)
  const used = async () => (await account.used())[0]
  return { sign: account.sign, used, limitId }
}

/** The refusal of a call with calldata on `caip2`, a chain not on the list. */
const refusedOn = (caip2: string) => ({
  status: 403,
  code: 'SPEND_UNDECODABLE',
  message: expect.stringContaining(
    `on ${caip2}, a chain the service does not know to move its native coin only as a call's value`,
  ),
})

describe('a native limit on a chain whose precompiles may move the native coin without value', () => {
  it('Sei: the IBC precompile sending 1,000 SEI with no value is refused, naming the chain and the limit', async () => {
    const { sign, used, limitId } = await setup('eip155:1329', [FRIEND])
    const refused = await sign(tx(1329, SEI_IBC, 0n, seiIbcTransfer))
    expect(refused).toEqual(refusedOn('eip155:1329'))
    expect((refused as { message: string }).message).toContain(`spending limit ${limitId} (daily)`)
    expect((refused as { message: string }).message).toContain(`its call to ${SEI_IBC} carries calldata`)
    // A plain transfer is counted and held to the allow-list as on any chain.
    expect(await sign(tx(1329, FRIEND, 4n))).toBe(200)
    expect(await sign(tx(1329, THIEF, 1n))).toMatchObject({
      status: 403,
      code: 'SPEND_DESTINATION_NOT_ALLOWED',
    })
    expect(await sign(tx(1329, FRIEND, 7n))).toMatchObject({ status: 429, code: 'SPENDING_LIMIT_EXCEEDED' })
    expect(await used()).toBe('4')
  })

  it("Evmos (Cosmos EVM): WEVMOS transfer, which moves the bank balance, is counted as the coin; a creation's init code is refused", async () => {
    const { sign, used } = await setup('eip155:9001')
    // WEVMOS is the coin's own contract (limits/nativeTokenContracts.ts): its transfer is read.
    expect(await sign(tx(9001, WEVMOS, 0n, erc20Transfer(THIEF, 10n ** 21n)))).toMatchObject({
      status: 429,
      code: 'SPENDING_LIMIT_EXCEEDED',
    })
    const creation = await sign(tx(9001, undefined, 0n, '0x6080604052'))
    expect(creation).toMatchObject({ status: 403, code: 'SPEND_UNDECODABLE' })
    expect((creation as { message: string }).message).toContain('it creates a contract')
    expect(await sign(tx(9001, THIEF, 3n))).toBe(200)
    expect(await sign(tx(9001, WEVMOS, 0n, erc20Transfer(THIEF, 4n)))).toBe(200)
    expect(await used()).toBe('7')
  })
})

describe('a native limit on a chain whose coin moves only as value', () => {
  it.each([
    ['eip155:1', 1],
    ['eip155:31337', 31337],
    ['eip155:8453', 8453],
    ['eip155:42161', 42161],
  ])('%s: a call into a contract is signed and counts its value', async (caip2, chainId) => {
    const { sign, used } = await setup(caip2)
    expect(await sign(tx(chainId, WEVMOS, 0n, erc20Transfer(THIEF, 10n ** 21n)))).toBe(200)
    // OP Stack's withdrawal: its value is what leaves, and is counted.
    expect(await sign(tx(chainId, L2_TO_L1_MESSAGE_PASSER, 3n, '0xc2b3e5ac'))).toBe(200)
    expect(await sign(tx(chainId, undefined, 2n, '0x6080604052'))).toBe(200)
    expect(await sign(tx(chainId, L2_TO_L1_MESSAGE_PASSER, 6n, '0xc2b3e5ac'))).toMatchObject({
      status: 429,
      code: 'SPENDING_LIMIT_EXCEEDED',
    })
    expect(await used()).toBe('5')
  })
})

describe('a chain the operator names ([limits] value_only_chains)', () => {
  it('signs a call into a contract under a native limit there, counting its value; other chains still refuse', async () => {
    const { sign, used } = await setup('eip155:7777777', undefined, ['eip155:7777777'])
    expect(await sign(tx(7777777, L2_TO_L1_MESSAGE_PASSER, 3n, '0xc2b3e5ac'))).toBe(200)
    expect(await sign(tx(7777777, L2_TO_L1_MESSAGE_PASSER, 8n, '0xc2b3e5ac'))).toMatchObject({
      status: 429,
      code: 'SPENDING_LIMIT_EXCEEDED',
    })
    expect(await used()).toBe('3')
    // Naming one chain opens no other.
    const sei = await setup('eip155:1329', undefined, ['eip155:7777777'])
    expect(await sei.sign(tx(1329, SEI_IBC, 0n, seiIbcTransfer))).toEqual(refusedOn('eip155:1329'))
  })
})

/** The refusal of a call sending value under an ERC-20 limit of `caip2`, a chain not on the lists. */
const valueRefusedOn = (caip2: string) => ({
  status: 403,
  code: 'SPEND_UNDECODABLE',
  message: expect.stringContaining(`${caip2}, a chain the service does not know`),
})

describe('an ERC-20 limit on a chain whose native coin may be that token', () => {
  const metis = { type: 'SPENDING_LIMIT_ASSET_ERC20', caip2: 'eip155:1088', contract: METIS }

  it("Metis: a plain METIS transfer (the token's balance itself) is refused, naming the limit, the chain and the setting", async () => {
    const { sign, used, limitId } = await setup('eip155:1088', [FRIEND], undefined, metis)
    const refused = await sign(tx(1088, THIEF, 10n ** 21n))
    expect(refused).toEqual(valueRefusedOn('eip155:1088'))
    const { message } = refused as { message: string }
    expect(message).toContain(`spending limit ${limitId} (daily)`)
    expect(message).toContain(`sends ${10n ** 21n} wei`)
    expect(message).toContain('[limits] value_only_chains')
    // Even to the allow-list, and even with calldata the limit reads: the value is not counted.
    expect(await sign(tx(1088, FRIEND, 1n))).toEqual(valueRefusedOn('eip155:1088'))
    expect(await sign(tx(1088, METIS, 1n, erc20Transfer(FRIEND, 1n)))).toEqual(valueRefusedOn('eip155:1088'))
    // Calls without value are read as under any ERC-20 limit.
    expect(await sign(tx(1088, METIS, 0n, erc20Transfer(FRIEND, 4n)))).toBe(200)
    expect(await sign(tx(1088, METIS, 0n, erc20Transfer(THIEF, 1n)))).toMatchObject({
      status: 403,
      code: 'SPEND_DESTINATION_NOT_ALLOWED',
    })
    expect(await used()).toBe('4')
  })

  it('value is signed where the chain is listed, where the operator names it, and where the coin contract is known to be another', async () => {
    const ethereum = await setup('eip155:1', undefined, undefined, {
      type: 'SPENDING_LIMIT_ASSET_ERC20',
      caip2: 'eip155:1',
      contract: TOKEN,
    })
    expect(await ethereum.sign(tx(1, THIEF, 10n ** 21n))).toBe(200)
    expect(await ethereum.used()).toBe('0')
    const named = await setup('eip155:1088', undefined, ['eip155:1088'], metis)
    expect(await named.sign(tx(1088, THIEF, 5n))).toBe(200)
    expect(await named.used()).toBe('0')
    // Celo's coin is CeloToken (limits/nativeTokenContracts.ts), not cUSD.
    const celo = await setup('eip155:42220', undefined, undefined, {
      type: 'SPENDING_LIMIT_ASSET_ERC20',
      caip2: 'eip155:42220',
      contract: CELO_CUSD,
    })
    expect(await celo.sign(tx(42220, THIEF, 5n))).toBe(200)
    expect(await celo.used()).toBe('0')
    // Naming one chain opens no other.
    const sei = await setup('eip155:1329', undefined, ['eip155:1088'], {
      type: 'SPENDING_LIMIT_ASSET_ERC20',
      caip2: 'eip155:1329',
      contract: TOKEN,
    })
    expect(await sei.sign(tx(1329, THIEF, 5n))).toEqual(valueRefusedOn('eip155:1329'))
  })
})
