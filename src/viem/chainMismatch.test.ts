/**
 * The EIP-1193 provider refuses a transaction that names another chain than the one it is on, as
 * wallets do (MetaMask: "Provided chainId must match the active chainId"): `eth_signTransaction` /
 * `eth_sendTransaction` with `chainId: 0x1` on 31337 once signed (and sent) it for 31337. So is
 * `eth_signTypedData_v4` whose domain names another chain (a Permit for mainnet, asked of a wallet
 * on 31337, was signed: valid on mainnet).
 */
import {
  type Address,
  type Chain,
  type Hex,
  numberToHex,
  parseTransaction,
  recoverMessageAddress,
  recoverTypedDataAddress,
  toHex,
} from 'viem'
import { anvil } from 'viem/chains'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EvmNode, startEvmNode } from '../../scripts/evmNode.mjs'
import { createWallet } from '../core/actions/activities/createWallet.ts'
import { createClientFixture } from '../core/test/fixtures.ts'
import { permitTypedData } from '../test/permitTypedData.ts'
import { createLatchkeyEip1193Provider } from './index.ts'

let node: EvmNode
let chain: Chain
beforeAll(async () => {
  node = await startEvmNode()
  chain = { ...anvil, rpcUrls: { default: { http: [node.url] } } }
})
afterAll(async () => {
  await node?.close()
})

async function setUp() {
  const fx = await createClientFixture()
  await fx.signUpDirect()
  const { addresses } = await createWallet(fx.client, { walletName: 'Main', chains: ['ethereum'] })
  const address = addresses[0] as Address
  await node.rpc('anvil_setBalance', [address, numberToHex(10n ** 19n)])
  const provider = createLatchkeyEip1193Provider(fx.client, { chains: [chain] })
  return { provider, address }
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ value }),
    (error: { code?: number; message?: string }) => ({ error: error.code ?? error.message }),
  )

describe('the EIP-1193 provider and the chain a request names', () => {
  it('eth_signTransaction naming another chain id is refused, not signed for the current chain', async () => {
    const { provider, address } = await setUp()
    expect(await provider.request({ method: 'eth_chainId' })).toBe('0x7a69')
    const result = await outcome(
      provider.request({
        method: 'eth_signTransaction',
        params: [
          { from: address, to: '0x000000000000000000000000000000000000dEaD', value: '0x1', chainId: '0x1' },
        ],
      }),
    )
    const signedFor = 'value' in result ? parseTransaction(result.value as Hex).chainId : undefined
    expect({ signedFor, refused: 'error' in result }).toEqual({ signedFor: undefined, refused: true })
  })

  it('a chain id given as a number or a decimal string is read too: another chain refused, its own signed', async () => {
    const { provider, address } = await setUp()
    const tx = (chainId: unknown) => ({
      from: address,
      to: '0x000000000000000000000000000000000000dEaD',
      value: '0x1',
      chainId,
    })
    for (const chainId of [1, '1'])
      expect(
        await outcome(provider.request({ method: 'eth_signTransaction', params: [tx(chainId) as never] })),
        String(chainId),
      ).toEqual({ error: -32602 })
    const signed = await provider.request({ method: 'eth_signTransaction', params: [tx(31337) as never] })
    expect(parseTransaction(signed as Hex).chainId).toBe(31337)
  })

  it('naming its own chain, the transaction is signed for it', async () => {
    const { provider, address } = await setUp()
    const signed = await provider.request({
      method: 'eth_signTransaction',
      params: [
        { from: address, to: '0x000000000000000000000000000000000000dEaD', value: '0x1', chainId: '0x7a69' },
      ],
    })
    expect(parseTransaction(signed as Hex).chainId).toBe(31337)
  })

  const permit = permitTypedData

  it('eth_signTypedData_v4 whose domain names another chain is refused, in any spelling of the id', async () => {
    const { provider, address } = await setUp()
    for (const chainId of [1, '1', '0x1']) {
      const result = await outcome(
        provider.request({
          method: 'eth_signTypedData_v4',
          params: [address, JSON.stringify(permit(chainId))],
        }),
      )
      expect(result, String(chainId)).toEqual({ error: -32602 })
    }
  })

  it('eth_signTypedData_v4 for its own chain, or with no chain in the domain, is signed', async () => {
    const { provider, address } = await setUp()
    for (const chainId of [31337, '0x7a69', undefined]) {
      const typedData = permit(chainId)
      if (chainId === undefined) {
        delete (typedData.domain as { chainId?: unknown }).chainId
        typedData.types.EIP712Domain = typedData.types.EIP712Domain.filter(
          (field) => field.name !== 'chainId',
        )
      }
      const signature = (await provider.request({
        method: 'eth_signTypedData_v4',
        params: [address, JSON.stringify(typedData)],
      })) as Hex
      expect(await recoverTypedDataAddress({ ...typedData, signature } as never)).toBe(address)
    }
  })

  it('personal_sign signs hex as its bytes and other text as UTF-8, as MetaMask does', async () => {
    const { provider, address } = await setUp()
    const text = (await provider.request({
      method: 'personal_sign',
      params: ['hello world', address],
    })) as Hex
    expect(await recoverMessageAddress({ message: 'hello world', signature: text })).toBe(address)
    const hex = (await provider.request({
      method: 'personal_sign',
      params: [toHex('hello world'), address],
    })) as Hex
    expect(await recoverMessageAddress({ message: 'hello world', signature: hex })).toBe(address)
  })

  it('a request the service refuses for a field it carries is invalid params (-32602), not a kit code', async () => {
    const { provider, address } = await setUp()
    const typedData = {
      types: { EIP712Domain: [{ name: 'chainId', type: 'uint256' }], Ping: [{ name: 'n', type: 'uint256' }] },
      primaryType: 'Ping',
      domain: { chainId: 31337 },
      message: { n: 'not a number' },
    }
    expect(
      await outcome(
        provider.request({ method: 'eth_signTypedData_v4', params: [address, JSON.stringify(typedData)] }),
      ),
    ).toEqual({ error: -32602 })
  })
})
