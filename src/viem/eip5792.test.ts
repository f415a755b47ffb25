import type { SendTransactionStatus } from '@latchkey/protocol'
import { type Address, type Chain, createWalletClient, custom, type Hex, numberToHex } from 'viem'
import { getCallsStatus, getCapabilities, sendCalls, showCallsStatus, waitForCallsStatus } from 'viem/actions'
import { anvil, mainnet } from 'viem/chains'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type EvmNode, startEvmNode } from '../../scripts/evmNode.mjs'
import { createWallet } from '../core/actions/activities/createWallet.ts'
import { type ClientFixture, createClientFixture, memoryStorage } from '../core/test/fixtures.ts'
import { type RecordedSend, recordedSendService } from '../core/test/recordedSendService.ts'
import { createLatchkeyEip1193Provider } from './provider.ts'

const SHOP = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
// Code that always reverts: PUSH1 0 PUSH1 0 REVERT.
const REVERTER = '0x000000000000000000000000000000000000bad0'

let node: EvmNode
let chain: Chain
beforeAll(async () => {
  node = await startEvmNode()
  chain = { ...anvil, rpcUrls: { default: { http: [node.url] } } }
  await node.rpc('anvil_setCode', [REVERTER, '0x60006000fd'])
})
afterAll(async () => {
  await node?.close()
})

/**
 * Until the local service broadcasts, the send path answers in the published shapes and stands
 * for the service's one transaction by running the batch's first call on anvil as the user, so
 * the receipts come from a real node: INCLUDED when it succeeded, FAILED when it reverted.
 */
async function runOnAnvil(send: RecordedSend): Promise<SendTransactionStatus[]> {
  const { from, calls } = send.parameters as {
    from: Address
    calls: { to: Address; value?: string; data?: Hex }[]
  }
  const call = calls[0] as (typeof calls)[number]
  await node.rpc('anvil_setBalance', [from, numberToHex(10n ** 18n)])
  await node.rpc('anvil_impersonateAccount', [from])
  const txHash = (await node.rpc('eth_sendTransaction', [
    {
      from,
      to: call.to,
      value: numberToHex(BigInt(call.value ?? '0')),
      data: call.data ?? '0x',
      gas: numberToHex(100_000),
    },
  ])) as Hex
  let receipt = (await node.rpc('eth_getTransactionReceipt', [txHash])) as { status: Hex } | null
  for (let tries = 0; !receipt && tries < 100; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    receipt = (await node.rpc('eth_getTransactionReceipt', [txHash])) as { status: Hex } | null
  }
  if (!receipt) throw new Error(`anvil did not mine ${txHash}`)
  return [
    { txStatus: 'PENDING' },
    receipt.status === '0x1'
      ? { txStatus: 'INCLUDED', eth: { txHash } }
      : { txStatus: 'FAILED', eth: { txHash }, error: { message: 'execution reverted' } },
  ]
}

describe('EIP-5792 on the EIP-1193 provider, through viem', () => {
  let fx: ClientFixture
  let from: Address
  let recorded: ReturnType<typeof recordedSendService>
  let shown: string[]
  const wallet = (sponsor = false) => {
    const client = fx.reload({ fetch: recorded.fetch })
    const provider = createLatchkeyEip1193Provider(client, {
      chains: [chain],
      sponsor,
      showCallsStatus: (id) => void shown.push(id),
    })
    return createWalletClient({ account: from, chain, transport: custom(provider), pollingInterval: 20 })
  }

  beforeEach(async () => {
    fx = await createClientFixture()
    await fx.signUpDirect()
    from = (await createWallet(fx.client, { walletName: 'Main', chains: ['ethereum'] }))
      .addresses[0] as Address
    recorded = recordedSendService(fx.harness.service.fetch as typeof fetch, runOnAnvil)
    shown = []
  })

  it('reports atomic batching and sponsorship per chain as the service does them for the organization', async () => {
    // The service sends on the node's chain through a delegate and a sponsor; on mainnet it has no node.
    const served = await createClientFixture(
      {},
      {
        rpc: { [`eip155:${chain.id}`]: node.url },
        sponsorship: { delegates: { [`eip155:${chain.id}`]: '0x1111111111111111111111111111111111111111' } },
      },
    )
    await served.signUpDirect()
    const account = (await createWallet(served.client, { walletName: 'Main', chains: ['ethereum'] }))
      .addresses[0] as Address
    const provider = createLatchkeyEip1193Provider(served.client, { chains: [chain, mainnet] })
    expect(await provider.request({ method: 'wallet_getCapabilities', params: [account] })).toEqual({
      [numberToHex(chain.id)]: { atomic: { status: 'supported' }, gasSponsorship: { supported: true } },
      [numberToHex(mainnet.id)]: { atomic: { status: 'unsupported' }, gasSponsorship: { supported: false } },
    })
    // Through viem, one chain asked for.
    const client = createWalletClient({ account, chain, transport: custom(provider) })
    expect(await getCapabilities(client, { chainId: chain.id })).toEqual({
      atomic: { status: 'supported' },
      gasSponsorship: { supported: true },
    })
    await served.harness.service.close()
  })

  it('a service without a node or sponsor for the chain says so, whatever the provider was told', async () => {
    expect(await getCapabilities(wallet(true), { chainId: chain.id })).toEqual({
      atomic: { status: 'unsupported' },
      gasSponsorship: { supported: false },
    })
  })

  it('signed out, reports what the provider was configured with', async () => {
    const signedOut = createLatchkeyEip1193Provider(fx.reload({ storage: memoryStorage() }), {
      chains: [chain],
      sponsor: true,
    })
    expect(await signedOut.request({ method: 'wallet_getCapabilities', params: [] })).toEqual({
      [numberToHex(chain.id)]: { atomic: { status: 'supported' }, gasSponsorship: { supported: true } },
    })
  })

  it('sendCalls → waitForCallsStatus: one eth_send_transaction, success with the node receipt', async () => {
    const client = wallet()
    const { id } = await sendCalls(client, {
      calls: [
        { to: SHOP, value: 1234n },
        { to: SHOP, data: '0xdeadbeef' },
      ],
      forceAtomic: true,
      capabilities: { gasSponsorship: {} },
    })
    expect(recorded.sends.map((s) => s.parameters)).toEqual([
      {
        from,
        caip2: `eip155:${chain.id}`,
        sponsor: true,
        calls: [
          { to: SHOP, value: '1234' },
          { to: SHOP, data: '0xdeadbeef' },
        ],
      },
    ])
    const result = await waitForCallsStatus(client, { id, pollingInterval: 20 })
    expect(result).toMatchObject({ status: 'success', statusCode: 200, atomic: true, chainId: chain.id })
    expect(result.receipts).toHaveLength(1)
    expect(result.receipts?.[0]).toMatchObject({ status: 'success' })
    const statuses = recorded.statuses.get(recorded.sends[0]?.sendTransactionStatusId as string)
    const txHash = statuses?.[1]?.eth?.txHash
    expect(txHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(result.receipts?.[0]?.transactionHash).toBe(txHash)
    await showCallsStatus(client, { id })
    expect(shown).toEqual([id])
  })

  it('a pending batch is 100; a reverted one 500 with its receipt; one never included 400', async () => {
    const client = wallet()
    const reverted = await sendCalls(client, { calls: [{ to: REVERTER }] })
    expect((await getCallsStatus(client, { id: reverted.id })).statusCode).toBe(100)
    expect(await getCallsStatus(client, { id: reverted.id })).toMatchObject({
      status: 'failure',
      statusCode: 500,
      receipts: [{ status: 'reverted' }],
    })
    const cancelled = await sendCalls(client, { calls: [{ to: SHOP }] })
    recorded.statuses.set(recorded.sends[1]?.sendTransactionStatusId as string, [{ txStatus: 'CANCELLED' }])
    expect(await getCallsStatus(client, { id: cancelled.id })).toMatchObject({
      status: 'failure',
      statusCode: 400,
    })
  })

  it('refuses what EIP-5792 says to refuse, with its codes', async () => {
    const client = wallet()
    const codeOf = (promise: Promise<unknown>) =>
      promise.then(
        () => 'resolved',
        (e: { walk?: (fn: (e: unknown) => boolean) => unknown; code?: number }) =>
          (
            e.walk?.((x) => typeof (x as { code?: unknown }).code === 'number') as
              | { code: number }
              | undefined
          )?.code ?? e.code,
      )
    const many = Array.from({ length: 51 }, () => ({ to: SHOP as Address }))
    expect(await codeOf(sendCalls(client, { calls: many }))).toBe(5740)
    expect(
      await codeOf(
        sendCalls(client, { calls: [{ to: SHOP }], capabilities: { paymasterService: { url: 'x' } } }),
      ),
    ).toBe(5700)
    expect(await codeOf(getCallsStatus(client, { id: 'not-a-batch' }))).toBe(5730)
    const chosen = await sendCalls(client, { id: 'order-42', calls: [{ to: SHOP }] })
    expect(chosen.id).toBe('order-42')
    expect(await getCallsStatus(client, { id: 'order-42' })).toMatchObject({ statusCode: 100 })
    expect(await codeOf(sendCalls(client, { id: 'order-42', calls: [{ to: SHOP }] }))).toBe(5720)
    // An optional capability it does not know is ignored.
    await sendCalls(client, {
      calls: [{ to: SHOP }],
      capabilities: { paymasterService: { url: 'x', optional: true } },
    })
    expect(recorded.sends).toHaveLength(2)
  })
})
