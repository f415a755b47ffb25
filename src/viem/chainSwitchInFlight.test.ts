/**
 * A request runs on the chain the provider was on when the app asked, though a
 * `wallet_switchEthereumChain` (wagmi's switchChain, a network picker) lands while it is in flight:
 * the provider once checked a transaction's `chainId` against the chain it was on, awaited the
 * session's accounts, then signed (and for eth_sendTransaction broadcast) for whatever chain it was
 * on by then, so a transaction the app built for chain A, naming chain A, was signed for chain B
 * and sent on B's node.
 */
import { type Address, type Chain, type Hex, numberToHex, parseTransaction } from 'viem'
import { anvil } from 'viem/chains'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EvmNode, startEvmNode } from '../../scripts/evmNode.mjs'
import { createWallet } from '../core/actions/activities/createWallet.ts'
import { createClientFixture } from '../core/test/fixtures.ts'
import { recordedSendService } from '../core/test/recordedSendService.ts'
import { permitTypedData } from '../test/permitTypedData.ts'
import { createLatchkeyEip1193Provider } from './index.ts'

let nodeA: EvmNode
let nodeB: EvmNode
let chainA: Chain
let chainB: Chain
beforeAll(async () => {
  nodeA = await startEvmNode()
  nodeB = await startEvmNode({ chainId: 31338 })
  chainA = { ...anvil, rpcUrls: { default: { http: [nodeA.url] } } }
  // A second configured chain with its own node (another network the app serves).
  chainB = { ...anvil, id: 31338, name: 'Other', rpcUrls: { default: { http: [nodeB.url] } } }
})
afterAll(async () => {
  await nodeA?.close()
  await nodeB?.close()
})

const dead = '0x000000000000000000000000000000000000dEaD'

async function setUp() {
  const fx = await createClientFixture()
  await fx.signUpDirect()
  const { addresses } = await createWallet(fx.client, { walletName: 'Main', chains: ['ethereum'] })
  const address = addresses[0] as Address
  await nodeA.rpc('anvil_setBalance', [address, numberToHex(10n ** 19n)])
  await nodeB.rpc('anvil_setBalance', [address, numberToHex(10n ** 19n)])
  const provider = createLatchkeyEip1193Provider(fx.client, { chains: [chainA, chainB] })
  return { provider, address }
}

type Provider = Awaited<ReturnType<typeof setUp>>['provider']

const outcome = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ value }),
    (error: { code?: number; message?: string }) => ({ error: error.code ?? error.message }),
  )

/** Asks for `args`, then switches to chain B while it is in flight (it awaits the session's accounts). */
async function withSwitchInFlight(provider: Provider, args: { method: string; params: unknown[] }) {
  const pending = outcome(provider.request(args))
  await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: numberToHex(31338) }] })
  expect(await provider.request({ method: 'eth_chainId' })).toBe(numberToHex(31338))
  return pending
}

const signTransaction = (address: Address, chainId?: Hex) => ({
  method: 'eth_signTransaction',
  params: [{ from: address, to: dead, value: '0x1', ...(chainId ? { chainId } : {}) }],
})

const balanceOf = async (node: EvmNode) =>
  BigInt((await node.rpc('eth_getBalance', [dead, 'latest'])) as string)

describe('a chain switch while a request is in flight', () => {
  it('control: with no switch, a transaction naming 31337 is signed for 31337', async () => {
    const { provider, address } = await setUp()
    const signed = (await provider.request(signTransaction(address, '0x7a69'))) as Hex
    expect(parseTransaction(signed).chainId).toBe(31337)
    provider.destroy()
  })

  it('eth_signTransaction naming chain A is signed for chain A, not the chain switched to meanwhile', async () => {
    const { provider, address } = await setUp()
    const result = await withSwitchInFlight(provider, signTransaction(address, '0x7a69'))
    expect('value' in result ? parseTransaction(result.value as Hex).chainId : result).toBe(31337)
    provider.destroy()
  })

  it('eth_signTransaction without a chain id is signed for the chain the app was on when it asked', async () => {
    const { provider, address } = await setUp()
    const result = await withSwitchInFlight(provider, signTransaction(address))
    expect('value' in result ? parseTransaction(result.value as Hex).chainId : result).toBe(31337)
    provider.destroy()
  })

  it('eth_sendTransaction for chain A is sent on chain A, and nothing moves on chain B', async () => {
    const { provider, address } = await setUp()
    const [beforeA, beforeB] = [await balanceOf(nodeA), await balanceOf(nodeB)]
    const result = await withSwitchInFlight(provider, {
      method: 'eth_sendTransaction',
      params: [{ from: address, to: dead, value: '0x1', chainId: '0x7a69' }],
    })
    expect(result).toEqual({ value: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    expect((await balanceOf(nodeB)) - beforeB, 'wei moved on chain B').toBe(0n)
    expect((await balanceOf(nodeA)) - beforeA, 'wei moved on chain A').toBe(1n)
    provider.destroy()
  })

  const typedData = (chainId: number) => JSON.stringify(permitTypedData(chainId))

  it("eth_signTypedData_v4's domain is checked against the chain the app was on when it asked", async () => {
    const { provider, address } = await setUp()
    // Asked on chain A for a domain naming chain B: refused, though the switch to B lands meanwhile.
    expect(
      await withSwitchInFlight(provider, {
        method: 'eth_signTypedData_v4',
        params: [address, typedData(31338)],
      }),
    ).toEqual({ error: -32602 })
    provider.destroy()
    // Asked on chain A for a domain naming chain A: signed.
    const second = await setUp()
    expect(
      await withSwitchInFlight(second.provider, {
        method: 'eth_signTypedData_v4',
        params: [second.address, typedData(31337)],
      }),
    ).toEqual({ value: expect.stringMatching(/^0x[0-9a-f]{130}$/) })
    second.provider.destroy()
  })

  it('wallet_sendCalls without a chain id is sent on the chain the app was on when it asked', async () => {
    const fx = await createClientFixture()
    await fx.signUpDirect()
    const { addresses } = await createWallet(fx.client, { walletName: 'Main', chains: ['ethereum'] })
    const recorded = recordedSendService(fx.harness.service.fetch as typeof fetch)
    const provider = createLatchkeyEip1193Provider(fx.reload({ fetch: recorded.fetch }), {
      chains: [chainA, chainB],
    })
    const result = await withSwitchInFlight(provider, {
      method: 'wallet_sendCalls',
      params: [{ version: '2.0.0', from: addresses[0], calls: [{ to: dead, value: '0x1' }] }],
    })
    expect(result).toEqual({ value: { id: expect.stringMatching(/@0x7a69$/) } })
    expect(recorded.sends.map((send) => send.parameters.caip2)).toEqual(['eip155:31337'])
    provider.destroy()
  })
})
