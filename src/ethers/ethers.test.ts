import {
  Contract,
  ContractFactory,
  JsonRpcProvider,
  Transaction,
  verifyMessage,
  verifyTypedData,
} from 'ethers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EvmNode, startEvmNode } from '../../scripts/evmNode.mjs'
import { createWallet } from '../core/actions/activities/createWallet.ts'
import { createClientFixture } from '../core/test/fixtures.ts'
import { LatchkeySigner } from './index.ts'

// Stores the first calldata word in slot 0 (CALLDATALOAD(0) SSTORE(0) STOP), deployed by a
// 12-byte constructor that returns it.
const INITCODE = '0x6007600c60003960076000f360003560005500'
const ABI = ['function set(uint256 value)']

let node: EvmNode
beforeAll(async () => {
  node = await startEvmNode()
})
afterAll(async () => {
  await node?.close()
})

describe('LatchkeySigner (ethers v6) against the local service and anvil', () => {
  it('deploys and calls a contract, signs messages, typed data and transactions', async () => {
    const fx = await createClientFixture()
    await fx.signUpDirect()
    const { addresses } = await createWallet(fx.client, { walletName: 'Main', chains: ['ethereum'] })
    const address = addresses[0] as string
    const provider = new JsonRpcProvider(node.url, 31337, {
      staticNetwork: true,
      cacheTimeout: -1,
      batchMaxCount: 1,
    })
    await provider.send('anvil_setBalance', [address, '0x8ac7230489e80000'])
    const signer = new LatchkeySigner(fx.client, { address }).connect(provider)
    expect(await signer.getAddress()).toBe(address)

    const factory = new ContractFactory(ABI, INITCODE, signer)
    const deployed = await factory.deploy()
    await deployed.waitForDeployment()
    const contract = new Contract(await deployed.getAddress(), ABI, signer)
    const response = await (
      contract.getFunction('set') as (v: bigint) => Promise<{ wait(): Promise<unknown> }>
    )(0x1234n)
    const receipt = (await response.wait()) as { status: number; from: string }
    expect(receipt).toMatchObject({ status: 1, from: address })
    // The stored word is the calldata's first 32 bytes: selector then the argument's leading bytes.
    const data = contract.interface.encodeFunctionData('set', [0x1234n])
    expect(await provider.getStorage(await contract.getAddress(), 0)).toBe(`0x${data.slice(2, 66)}`)

    const signature = await signer.signMessage('hello ethers')
    expect(verifyMessage('hello ethers', signature)).toBe(address)
    const domain = { name: 'Mail', version: '1', chainId: 31337 }
    const types = {
      Note: [
        { name: 'text', type: 'string' },
        { name: 'n', type: 'uint256' },
      ],
    }
    const value = { text: 'hi', n: 5n }
    expect(verifyTypedData(domain, types, value, await signer.signTypedData(domain, types, value))).toBe(
      address,
    )

    const populated = await signer.populateTransaction({ to: address, value: 1n })
    const signed = Transaction.from(await signer.signTransaction(populated))
    expect(signed.from).toBe(address)
    await expect(
      signer.signTransaction({ ...populated, from: '0x000000000000000000000000000000000000dEaD' }),
    ).rejects.toThrow(/cannot be signed/)
  })
})
