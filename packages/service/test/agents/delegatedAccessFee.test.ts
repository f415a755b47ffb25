// The delegated-access recipe (examples/delegated-access.ts) bounds the fee of what the back end
// signs, on a real chain (anvil, whose block fee recipient is set to the thief: a builder or
// sequencer the back end runs or pays with a kickback). A transaction pays up to gas × maxFeePerGas
// to the block's producer whatever it sends: before, the recipe bounded only the value, and the
// back end's "1 wei to X" at 100,000 gwei a gas moved ~2.1 ETH (2,100 times maxWei) out of the
// user's account in one signature. Now the ALLOW needs an EIP-1559 transaction of at most `maxGas`
// gas at most `maxFeePerGas` a gas. Controls: an ordinary transfer is signed and mined; the same
// attack under the recipe's ALLOW without its fee clauses is signed and pays the thief.
import { serializeTransaction } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Delegation, delegationPolicies } from '../../../../examples/delegated-access.ts'
import { type EvmNode, startEvmNode } from '../../../../scripts/evmNode.mjs'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  resultOf,
  testKey,
} from '../../src/testing/harness.ts'

const MERCHANT = '0x000000000000000000000000000000000000beef'
const THIEF = '0x00000000000000000000000000000000007a1ef0'
const ETH = 10n ** 18n
const GWEI = 10n ** 9n
const MAX_WEI = 10n ** 15n // 0.001 ETH per transfer
const MAX_FEE_PER_GAS = 10n * GWEI
const GRANT = { recipient: MERCHANT, chainId: 31337, maxWei: MAX_WEI, maxFeePerGas: MAX_FEE_PER_GAS }
/** The recipe's clauses on the transaction's type and fee. */
const FEE_CLAUSES =
  / && eth\.tx\.type == 'eip1559' && eth\.tx\.gas <= \d+ && eth\.tx\.max_fee_per_gas <= \d+$/

let node: EvmNode
let h: Harness
beforeAll(async () => {
  node = await startEvmNode()
  h = await createHarness()
}, 60_000)
afterAll(async () => {
  await node?.close()
})

const rpc = (method: string, params: unknown[]) => node.rpc(method, params) as Promise<unknown>
const balance = async (address: string) =>
  BigInt((await rpc('eth_getBalance', [address, 'latest'])) as string)

/** A funded user whose back end holds the policies `policiesOf` its user id gives (made by the root). */
async function delegated(policiesOf: (backendUserId: string) => ReturnType<typeof delegationPolicies>) {
  const root = testKey()
  const backend = testKey()
  const sub = await h.createSubOrganization({
    keys: [root],
    wallet: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] },
  })
  const asRoot = { organizationId: sub.organizationId, as: root }
  h.clock.advance(1)
  const { userIds } = resultOf(
    'create_users',
    await h.submit(
      'create_users',
      {
        users: [
          {
            userName: 'App back end',
            apiKeys: [backend.apiKey('back end')],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      },
      asRoot,
    ),
  )
  const backendUserId = userIds[0] as string
  h.clock.advance(1)
  resultOf(
    'create_policies',
    await h.submit('create_policies', { policies: policiesOf(backendUserId) }, asRoot),
  )
  const user = sub.addresses![0]!
  await rpc('anvil_setBalance', [user, `0x${(10n * ETH).toString(16)}`])
  let nonce = Number(BigInt((await rpc('eth_getTransactionCount', [user, 'latest'])) as string))
  const sign = async (transaction: { value: bigint; feePerGas: bigint; gas?: bigint; legacy?: boolean }) => {
    h.clock.advance(1)
    const { value, feePerGas, gas = 21_000n } = transaction
    const unsigned = transaction.legacy
      ? serializeTransaction({
          type: 'legacy',
          chainId: 31337,
          nonce,
          gas,
          gasPrice: feePerGas,
          to: MERCHANT,
          value,
        })
      : serializeTransaction({
          type: 'eip1559',
          chainId: 31337,
          nonce,
          gas,
          maxFeePerGas: feePerGas,
          maxPriorityFeePerGas: feePerGas,
          to: MERCHANT,
          value,
        })
    const reply = await h.submit(
      'sign_transaction',
      { signWith: user, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned.slice(2) },
      { organizationId: sub.organizationId, as: backend },
    )
    return reply.status === 200
      ? `0x${(resultOf('sign_transaction', reply) as { signedTransaction: string }).signedTransaction}`
      : `${reply.status} ${reply.body.details?.outcome ?? reply.body.code}`
  }
  /** Broadcasts a signed transaction (mined at once): what the user lost and the thief gained. */
  const broadcast = async (signed: string) => {
    const [userBefore, thiefBefore] = [await balance(user), await balance(THIEF)]
    const hash = await rpc('eth_sendRawTransaction', [signed])
    for (let i = 0; i < 100 && !(await rpc('eth_getTransactionReceipt', [hash])); i++)
      await new Promise((resolve) => setTimeout(resolve, 20))
    nonce++
    return { userLoss: userBefore - (await balance(user)), thiefGain: (await balance(THIEF)) - thiefBefore }
  }
  return { sign, broadcast }
}

describe('delegated access (examples/delegated-access.ts): the fee of a signature is bounded', () => {
  it('does not sign a transfer to the recipient whose fee pays the block producer ~2,100 times maxWei', async () => {
    await rpc('anvil_setCoinbase', [THIEF])
    const { sign, broadcast } = await delegated((id) => delegationPolicies(id, GRANT))
    // Controls: 2 ETH to X is refused by the recipe's DENY; maxWei at 2 gwei a gas is signed and
    // mined, costing the user maxWei and its fee (at most 21,000 gas at the ceiling).
    expect(await sign({ value: 2n * ETH, feePerGas: 2n * GWEI })).toBe('403 OUTCOME_DENY_EXPLICIT')
    const ordinary = await sign({ value: MAX_WEI, feePerGas: 2n * GWEI })
    expect(ordinary).toMatch(/^0x02/)
    const paid = await broadcast(ordinary)
    expect(paid.userLoss > MAX_WEI && paid.userLoss <= MAX_WEI + 21_000n * MAX_FEE_PER_GAS).toBe(true)

    // 1 wei at 100,000 gwei a gas (2.1 ETH of fee), a price just over the ceiling, a gas limit of
    // 1,000,000 (were X a contract, its code could burn all of it), a legacy transfer (it has no
    // max_fee_per_gas): no policy allows them.
    expect(await sign({ value: 1n, feePerGas: 100_000n * GWEI })).toBe('403 OUTCOME_DENY_IMPLICIT')
    expect(await sign({ value: 1n, feePerGas: MAX_FEE_PER_GAS + 1n })).toBe('403 OUTCOME_DENY_IMPLICIT')
    expect(await sign({ value: 1n, feePerGas: 2n * GWEI, gas: 1_000_000n })).toBe('403 OUTCOME_DENY_IMPLICIT')
    expect(await sign({ value: 1n, feePerGas: 2n * GWEI, legacy: true })).toBe('403 OUTCOME_DENY_IMPLICIT')
    // At the ceilings exactly: signed.
    expect(await sign({ value: 1n, feePerGas: MAX_FEE_PER_GAS })).toMatch(/^0x02/)
  }, 60_000)

  it('control: the same attack under the ALLOW without its fee clauses is signed and pays the thief ~2.1 ETH', async () => {
    await rpc('anvil_setCoinbase', [THIEF])
    const withoutFeeClauses = (backendUserId: string) => {
      const [allow, deny] = delegationPolicies(backendUserId, GRANT)
      return [{ ...allow!, condition: allow!.condition!.replace(FEE_CLAUSES, '') }, deny!]
    }
    const { sign, broadcast } = await delegated(withoutFeeClauses)
    const signed = await sign({ value: 1n, feePerGas: 100_000n * GWEI })
    expect(signed).toMatch(/^0x02/)
    const { userLoss, thiefGain } = await broadcast(signed)
    expect(userLoss).toBe(21_000n * 100_000n * GWEI + 1n)
    // The base fee is burnt: the rest of the 2.1 ETH is the tip, the block producer's.
    expect(thiefGain > 2n * ETH && thiefGain > 2_000n * MAX_WEI).toBe(true)
  }, 60_000)

  it('refuses a fee ceiling or gas limit that is not a whole number (it goes into the condition)', () => {
    const recipe = (grant: Delegation = GRANT) => delegationPolicies('back-end', grant)
    const grant = { ...GRANT }
    expect(() => recipe({ ...grant, maxFeePerGas: '1 || true' as unknown as bigint })).toThrow(
      /^maxFeePerGas:/,
    )
    expect(() => recipe({ ...grant, maxFeePerGas: -1n })).toThrow(/^maxFeePerGas:/)
    expect(() => recipe({ ...grant, maxFeePerGas: undefined as unknown as bigint })).toThrow(/^maxFeePerGas:/)
    expect(() => recipe({ ...grant, maxGas: '21000 || true' as unknown as bigint })).toThrow(/^maxGas:/)
    expect(() => recipe({ ...grant, maxGas: 20_999n })).toThrow(/^maxGas:/)
    // Control: whole numbers are the condition's literals; the gas limit is 21,000 unless given.
    expect(recipe()[0]!.condition).toMatch(
      / && eth\.tx\.gas <= 21000 && eth\.tx\.max_fee_per_gas <= 10000000000$/,
    )
    expect(recipe({ ...grant, maxGas: 250_000n })[0]!.condition).toMatch(/ && eth\.tx\.gas <= 250000 && /)
  })
})
