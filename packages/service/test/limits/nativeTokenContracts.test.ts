// Where a contract is the chain's native coin (Celo's CeloToken, Moonbeam's native-token ERC-20
// precompile, Evmos' WEVMOS precompile, Polygon PoS's MRC20: limits/nativeTokenContracts.ts), a
// native limit and an ERC-20 limit on that contract count the same coin. A native limit once
// counted only `value`, so a limited signer moved 1,000 CELO with `transfer` calldata of value 0;
// an ERC-20 limit on the CELO contract counted only calldata, so a plain value transfer moved the
// same balance. Evmos was not in the table: under "10 WEVMOS a day, only to FRIEND" a plain
// transfer of 1,000 EVMOS (the same bank balance) to anyone was counted 0 and signed (from the
// audit's coinAsErc20Limit.test.ts).
import { encodeFunctionData, erc20Abi, type Hex } from 'viem'
import { describe, expect, it } from 'vitest'
import { accountUnderLimits, unsignedTx } from './accountUnderLimits.ts'

const DEAD = '0x000000000000000000000000000000000000dead'
const FRIEND = '0x00000000000000000000000000000000000f00d5'
/** Celo mainnet (eip155:42220): CeloToken, whose transfer moves native CELO. */
const CELO_TOKEN = '0x471EcE3750Da237f93B8E339c536989b8978a438'
/** Moonbeam (eip155:1284) and Moonriver (eip155:1285): the native-token ERC-20 precompile. */
const MOONBEAM_NATIVE = '0x0000000000000000000000000000000000000802'
/** Evmos (eip155:9001): WEVMOS, the WERC20 precompile over the aevmos bank balance. */
const WEVMOS = '0xD4949664cD82660AaE99bEdc034a0deA8A0bd517'
/** Evmos testnet (eip155:9000): its WEVMOS precompile over atevmos. */
const WEVMOS_TESTNET = '0xcc491f589b45d4a3c679016195b3fb87d7848210'
/** Cosmos EVM's staking precompile: delegates the caller's coin with no value sent. */
const COSMOS_STAKING = '0x0000000000000000000000000000000000000800'
/** Polygon PoS (eip155:137): MRC20, which forwards the value it is sent. */
const POLYGON_NATIVE = '0x0000000000000000000000000000000000001010'
/** Uniswap's Permit2: a contract accounts commonly hold allowances for. */
const PERMIT2 = '0x000000000022d473030f116ddee9f6b43ac78ba3'

const tx = (chainId: number, to: string, value: bigint, data?: Hex) => unsignedTx(chainId, to, value, data)

const erc20 = (functionName: 'transfer' | 'approve', to: string, amount: bigint) =>
  encodeFunctionData({ abi: erc20Abi, functionName, args: [to as Hex, amount] })
const transferFrom = (from: string, to: string, amount: bigint) =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'transferFrom', args: [from as Hex, to as Hex, amount] })

/** An account under limits; a refusal as its status and code. */
async function setup() {
  const account = await accountUnderLimits()
  const sign = async (unsignedTransaction: string) => {
    const reply = await account.sign(unsignedTransaction)
    return reply === 200 ? 200 : { status: reply.status, code: reply.code }
  }
  return { ...account, sign }
}

const exceeded = { status: 429, code: 'SPENDING_LIMIT_EXCEEDED' }
const undecodable = { status: 403, code: 'SPEND_UNDECODABLE' }

describe('spending limits on a chain whose native coin is also an ERC-20 contract', () => {
  it('a native CELO limit counts what the CELO token moves, and refuses what it cannot read', async () => {
    const { limit, sign, used, eth } = await setup()
    await limit({ type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:42220' })
    // Control: 11 wei of value is over the 10-wei limit.
    expect(await sign(tx(42220, DEAD, 11n))).toEqual(exceeded)
    // 1,000 CELO out through the token contract, value 0: counted, so over the limit.
    expect(await sign(tx(42220, CELO_TOKEN, 0n, erc20('transfer', DEAD, 10n ** 21n)))).toEqual(exceeded)
    expect(await sign(tx(42220, CELO_TOKEN, 0n, transferFrom(eth, DEAD, 11n)))).toEqual(exceeded)
    expect(await used()).toEqual(['0'])
    expect(await sign(tx(42220, CELO_TOKEN, 0n, erc20('transfer', DEAD, 3n)))).toBe(200)
    expect(await sign(tx(42220, CELO_TOKEN, 0n, erc20('approve', DEAD, 4n)))).toBe(200)
    expect(await sign(tx(42220, DEAD, 2n))).toBe(200)
    expect(await used()).toEqual(['9'])
    // Calldata to the token it cannot read (transferWithComment, burn…), and a call into another
    // contract, which could move CELO through an allowance the account gave it before the limit.
    expect(await sign(tx(42220, CELO_TOKEN, 0n, '0x12345678'))).toEqual(undecodable)
    expect(await sign(tx(42220, PERMIT2, 0n, erc20('transfer', DEAD, 1n)))).toEqual(undecodable)
    // A plain transfer still passes.
    expect(await sign(tx(42220, FRIEND, 1n))).toBe(200)
    expect(await used()).toEqual(['10'])
  })

  it('a native limit on Moonbeam and Moonriver counts a transfer through the native-token precompile', async () => {
    const { limit, sign, used } = await setup()
    await limit({ type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1284' })
    await limit({ type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1285' })
    expect(await sign(tx(1284, DEAD, 11n))).toEqual(exceeded)
    expect(await sign(tx(1284, MOONBEAM_NATIVE, 0n, erc20('transfer', DEAD, 10n ** 21n)))).toEqual(exceeded)
    expect(await sign(tx(1285, MOONBEAM_NATIVE, 0n, erc20('approve', DEAD, 11n)))).toEqual(exceeded)
    expect(await sign(tx(1284, MOONBEAM_NATIVE, 0n, erc20('transfer', DEAD, 6n)))).toBe(200)
    expect(await used()).toEqual(['6', '0'])
  })

  it('an ERC-20 limit on the CELO token counts a plain CELO value transfer', async () => {
    const { limit, sign, used } = await setup()
    await limit({ type: 'SPENDING_LIMIT_ASSET_ERC20', caip2: 'eip155:42220', contract: CELO_TOKEN })
    // Control: 11 token units through transfer() are over the limit.
    expect(await sign(tx(42220, CELO_TOKEN, 0n, erc20('transfer', DEAD, 11n)))).toEqual(exceeded)
    // The same balance moved as the chain's native unit.
    expect(await sign(tx(42220, DEAD, 10n ** 21n))).toEqual(exceeded)
    expect(await sign(tx(42220, DEAD, 4n))).toBe(200)
    expect(await sign(tx(42220, CELO_TOKEN, 0n, erc20('transfer', DEAD, 5n)))).toBe(200)
    expect(await used()).toEqual(['9'])
  })

  it.each([
    ['Moonbeam', 1284, MOONBEAM_NATIVE],
    ['Evmos', 9001, WEVMOS],
    ['the Evmos testnet', 9000, WEVMOS_TESTNET],
  ])(
    'an ERC-20 limit on %s native-coin contract holds a plain transfer of the coin to its allow-list and amount',
    async (_, chainId, contract) => {
      const { limit, sign, used } = await setup()
      await limit({ type: 'SPENDING_LIMIT_ASSET_ERC20', caip2: `eip155:${chainId}`, contract }, [FRIEND])
      // 1,000 of the coin, value only, to an address off the allow-list: the token's balance itself.
      expect(await sign(tx(chainId, DEAD, 10n ** 21n))).toEqual({
        status: 403,
        code: 'SPEND_DESTINATION_NOT_ALLOWED',
      })
      expect(await sign(tx(chainId, FRIEND, 11n))).toEqual(exceeded)
      expect(await sign(tx(chainId, FRIEND, 4n))).toBe(200)
      expect(await sign(tx(chainId, contract, 0n, erc20('transfer', FRIEND, 5n)))).toBe(200)
      expect(await sign(tx(chainId, contract, 0n, erc20('transfer', FRIEND, 2n)))).toEqual(exceeded)
      expect(await used()).toEqual(['9'])
    },
  )

  it('a native EVMOS limit counts a WEVMOS transfer, and refuses the staking precompile', async () => {
    const { limit, sign, used, eth } = await setup()
    await limit({ type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:9001' })
    expect(await sign(tx(9001, WEVMOS, 0n, erc20('transfer', DEAD, 10n ** 21n)))).toEqual(exceeded)
    expect(await sign(tx(9001, WEVMOS, 0n, transferFrom(eth, DEAD, 11n)))).toEqual(exceeded)
    expect(await sign(tx(9001, WEVMOS, 0n, erc20('transfer', DEAD, 3n)))).toBe(200)
    expect(await sign(tx(9001, DEAD, 4n))).toBe(200)
    // delegate(delegator, validator, amount): the coin leaves with no value, into a precompile.
    expect(await sign(tx(9001, COSMOS_STAKING, 0n, '0x53266bbb'))).toEqual(undecodable)
    expect(await used()).toEqual(['7'])
  })

  it("Polygon's MRC20 moves only the value it is sent: counted as value, sent where its transfer names", async () => {
    const { limit, sign, used } = await setup()
    await limit({ type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:137' }, [FRIEND])
    await limit({ type: 'SPENDING_LIMIT_ASSET_ERC20', caip2: 'eip155:137', contract: POLYGON_NATIVE }, [
      FRIEND,
    ])
    // A plain value transfer counts under both; over 10, both refuse.
    expect(await sign(tx(137, FRIEND, 11n))).toEqual(exceeded)
    expect(await sign(tx(137, FRIEND, 2n))).toBe(200)
    // transfer(to, value) forwards the value sent to the recipient it names: the allow-list
    // holds it there, and it counts once.
    expect(await sign(tx(137, POLYGON_NATIVE, 3n, erc20('transfer', FRIEND, 3n)))).toBe(200)
    expect(await sign(tx(137, POLYGON_NATIVE, 1n, erc20('transfer', DEAD, 1n)))).toEqual({
      status: 403,
      code: 'SPEND_DESTINATION_NOT_ALLOWED',
    })
    expect(await used()).toEqual(['5', '5'])
    // Without value it moves nothing (MRC20 returns false when value and msg.value differ), and
    // MRC20 keeps no allowances: a call into another contract passes, as on every chain whose
    // coin moves only as value (limits/valueOnlyChains.ts).
    expect(await sign(tx(137, POLYGON_NATIVE, 0n, erc20('transfer', DEAD, 10n ** 21n)))).toBe(200)
    expect(await sign(tx(137, PERMIT2, 0n, erc20('transfer', DEAD, 1n)))).toBe(200)
    expect(await used()).toEqual(['5', '5'])
  })

  it('Ethereum, without such a contract, keeps the native rule: value counts, contract calls pass', async () => {
    const { limit, sign, used } = await setup()
    await limit({ type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' })
    expect(await sign(tx(1, CELO_TOKEN, 0n, erc20('transfer', DEAD, 10n ** 21n)))).toBe(200)
    expect(await sign(tx(1, PERMIT2, 0n, erc20('transfer', DEAD, 1n)))).toBe(200)
    expect(await sign(tx(1, DEAD, 11n))).toEqual(exceeded)
    expect(await used()).toEqual(['0'])
  })
})
